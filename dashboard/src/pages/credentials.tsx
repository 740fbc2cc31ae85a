import { useEffect, useState } from 'preact/hooks';
import { createToken, listTokens, revokeToken, type AccessToken, type TokenScope } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ConfirmButton } from '../components/confirm-button';
import { CopyButton } from '../components/copy-button';
import { ScrollBox } from '../components/scroll-box';
import { ShownOnce } from '../components/shown-once';
import { useAction } from '../components/use-action';
import { When } from '../components/when';
import type { PageProps } from './page';

const token = '<ACCESS_TOKEN>';

function curlExamples(base: string): { title: string; text: string }[] {
  const post = (path: string, body: object) =>
    `curl -s -X POST '${base}/${path}' \\\n  -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\\n  -d '${JSON.stringify(body)}'`;
  return [
    { title: 'Send a user', text: post('users', { userId: 'u-42', firstName: 'Ann', email: 'ann@example.com', attributes: { plan: 'gold' } }) },
    { title: 'Send an event', text: post('events', { userId: 'u-42', eventName: 'Signed up', eventData: { source: 'web' } }) },
  ];
}

/**
 * The account's credentials: its license code, where to send items, examples to copy, and its
 * access tokens (create one, shown once; revoke one, never the last).
 */
export function CredentialsPage({ license }: PageProps) {
  if (!license) return null;
  const base = `${window.location.origin}/v1/accounts/${encodeURIComponent(license)}`;
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Credentials</PageHeading>
      <dl class="facts">
        <dt>License code</dt>
        <dd>
          <code>{license}</code> <CopyButton text={license} label="Copy license code" />
        </dd>
        <dt>Ingest base URL</dt>
        <dd>
          <code>{base}</code> <CopyButton text={base} label="Copy ingest base URL" />
        </dd>
      </dl>
      <h2>Examples</h2>
      <p class="hint">Replace {token} with an access token of this account.</p>
      {curlExamples(base).map((example) => (
        <figure class="example" key={example.title}>
          <figcaption>
            {example.title} <CopyButton text={example.text} label={`Copy the example: ${example.title.toLowerCase()}`} />
          </figcaption>
          <pre tabIndex={0}>
            <code>{example.text}</code>
          </pre>
        </figure>
      ))}
      <Tokens license={license} />
    </section>
  );
}

function Tokens({ license }: { license: string }) {
  const [tokens, setTokens] = useState<AccessToken[] | null>(null);
  const [created, setCreated] = useState<(AccessToken & { accessToken: string }) | null>(null);
  const { busy, error, setError, run } = useAction();

  const reload = () =>
    listTokens(license).then(
      ({ tokens: found }) => setTokens(found),
      (failure: unknown) => setError(failure),
    );
  useEffect(() => {
    setTokens(null);
    setCreated(null);
    setError(null);
    void reload();
  }, [license]);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    await run(async () => {
      const made = await createToken(license, { label: String(fields.get('label') ?? ''), scope: String(fields.get('scope')) as TokenScope });
      setCreated(made);
      form.reset();
      await reload();
    });
  };

  const revoke = (id: string) =>
    run(async () => {
      await revokeToken(license, id);
      if (created?.id === id) setCreated(null);
      await reload();
    });

  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      <p class="hint">Scope ingest posts items only; ingest+read also reads, signs in here and manages tokens.</p>
      {created ? (
        <ShownOnce title="New access token" label="Access token" value={created.accessToken} onDismiss={() => setCreated(null)}>
          <p>
            Label {created.label}, scope {created.scope}.
          </p>
        </ShownOnce>
      ) : null}
      <ErrorText error={error} />
      {!tokens ? (
        error ? null : (
          <p role="status">Loading the tokens…</p>
        )
      ) : (
        <ScrollBox label="Access tokens">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Scope</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((row) => (
                <tr key={row.id}>
                  <td>{row.label}</td>
                  <td>{row.scope}</td>
                  <td>
                    <When at={row.createdAt} />
                  </td>
                  <td>
                    <When at={row.lastUsedAt} none="never" precision="minute" />
                  </td>
                  <td>
                    <ConfirmButton
                      text="Revoke"
                      label={`Revoke token ${row.label}`}
                      question={`Revoke ${row.label}? Clients using it are refused at once.`}
                      confirmText="Yes, revoke it"
                      busy={busy}
                      onConfirm={() => void revoke(row.id)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <form class="inline-form" onSubmit={create}>
        <h3>Create a token</h3>
        <div class="field">
          <label for="token-label">Label</label>
          <input
            id="token-label" name="label" type="text" maxLength={100} required placeholder="web shop" />
        </div>
        <div class="field">
          <label for="token-scope">Scope</label>
          <select
            id="token-scope" name="scope">
            <option value="ingest">ingest (post items only)</option>
            <option value="ingest+read">ingest+read (also read and sign in)</option>
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Create token
        </button>
      </form>
    </section>
  );
}
