import { useEffect, useState } from 'preact/hooks';
import { createAccount, listAccounts, type AccountSummary, type NewAccount } from '../api';
import { ErrorText, PageHeading } from '../components';
import { CopyButton } from '../components/copy-button';
import { ScrollBox } from '../components/scroll-box';
import { ShownOnce } from '../components/shown-once';
import { useAction } from '../components/use-action';
import { When } from '../components/when';
import type { PageProps } from './page';

/** Every account (operators only), oldest first, and a form to create one. */
export function AccountsPage(_props: PageProps) {
  const [accounts, setAccounts] = useState<AccountSummary[] | null>(null);
  const [created, setCreated] = useState<NewAccount | null>(null);
  const { busy, error, setError, run } = useAction();

  const reload = () =>
    listAccounts().then(
      ({ accounts: found }) => setAccounts(found),
      (failure: unknown) => setError(failure),
    );
  useEffect(() => {
    void reload();
  }, []);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') ?? '').trim();
    await run(async () => {
      setCreated(await createAccount(name));
      form.reset();
      await reload();
    });
  };

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Accounts</PageHeading>
      <form class="inline-form" onSubmit={create}>
        <h2>Create an account</h2>
        <div class="field">
          <label for="account-name">Name</label>
          <input
            id="account-name" name="name" type="text" required maxLength={200} placeholder="Acme" />
        </div>
        <button type="submit" disabled={busy}>
          Create account
        </button>
      </form>
      {created ? (
        <ShownOnce title="New account" label="Access token" value={created.accessToken} onDismiss={() => setCreated(null)}>
          <p>
            Account {created.name}, license code <code>{created.licenseCode}</code>{' '}
            <CopyButton text={created.licenseCode} label="Copy the new license code" />
          </p>
          <p>Its first access token (label initial, scope ingest+read) signs in to this dashboard with the license code.</p>
        </ShownOnce>
      ) : null}
      <ErrorText error={error} />
      <h2>Every account</h2>
      {!accounts ? (
        error ? null : (
          <p role="status">Loading the accounts…</p>
        )
      ) : accounts.length === 0 ? (
        <p>No accounts yet.</p>
      ) : (
        <ScrollBox label="Accounts">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">License code</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {accounts.map((account) => (
                <tr key={account.licenseCode}>
                  <td>{account.name}</td>
                  <td>
                    <code>{account.licenseCode}</code>
                  </td>
                  <td>
                    <When at={account.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
