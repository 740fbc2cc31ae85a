import { useEffect, useRef, useState } from 'preact/hooks';
import { listAccounts, rebuildAccount, type AccountSummary } from '../api';
import { ErrorText } from '../components';
import { useAction } from '../components/use-action';

interface Asked {
  license: string;
  /** Empty: every projection. */
  projection: string;
}

/** "Acme (license 0a1b…)" when the account is known to the list, else the license code as typed. */
const accountText = (license: string, accounts: AccountSummary[]): string => {
  const found = accounts.find((account) => account.licenseCode === license);
  return found ? `${found.name} (license ${license})` : `with license ${license}`;
};

/**
 * The rebuild of one account's read models (POST /admin/v1/accounts/<license>/projections/rebuild):
 * a license code (the picked account's at first) and a projection or all, then a confirmation that
 * names the account. Every other account goes on as it is.
 */
export function AccountRebuildForm({ license, names, onDone }: { license: string | null; names: string[]; onDone: () => void }) {
  const [typed, setTyped] = useState(license ?? '');
  const [projection, setProjection] = useState('');
  const [asking, setAsking] = useState<Asked | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [accounts, setAccounts] = useState<AccountSummary[]>([]);
  const { busy, error, setError, run } = useAction();
  const confirm = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    listAccounts().then(({ accounts: found }) => setAccounts(found), () => setAccounts([]));
  }, []);
  useEffect(() => {
    if (license && !typed) setTyped(license);
  }, [license]);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);

  const ask = (event: SubmitEvent) => {
    event.preventDefault();
    setDone(null);
    setError(null);
    setAsking({ license: typed.trim(), projection });
  };
  const rebuild = (asked: Asked) =>
    run(async () => {
      setAsking(null);
      const reply = await rebuildAccount(asked.license, asked.projection || undefined);
      setDone(`Asked for: ${reply.projections.join(', ')} of account ${accountText(asked.license, accounts)} (id ${reply.accountId}) emptied; the workers are replaying it.`);
      onDone();
    });

  const what = (asked: Asked) => (asked.projection ? `the ${asked.projection} read models` : 'every read model');
  return (
    <section aria-labelledby="account-rebuild-heading">
      <h2 id="account-rebuild-heading">Rebuild one account</h2>
      <p class="hint">The account's rows are emptied and its events replayed; every other account goes on as it is.</p>
      <form class="inline-form" aria-labelledby="account-rebuild-heading" onSubmit={ask}>
        <div class="field">
          <label for="rebuild-license">License code</label>
          <input
            id="rebuild-license"
            name="license"
            type="text"
            required
            maxLength={200}
            autoComplete="off"
            spellcheck={false}
            value={typed}
            onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="rebuild-projection">Projection</label>
          <select id="rebuild-projection" name="projection" value={projection} onChange={(event) => setProjection((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">All projections</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={busy || asking !== null}>
          Rebuild account…
        </button>
      </form>
      {asking ? (
        <div class="confirm-rebuild" role="group" aria-label="Confirm the rebuild of one account">
          <p>
            Rebuild {what(asking)} of account {accountText(asking.license, accounts)}? Until its replay ends, its read models are incomplete.
          </p>
          <button type="button" class="danger" ref={confirm} disabled={busy} onClick={() => void rebuild(asking)}>
            Yes, rebuild this account
          </button>
          <button type="button" class="secondary" onClick={() => setAsking(null)}>
            Cancel
          </button>
        </div>
      ) : null}
      {done ? <p role="status">{done}</p> : null}
      <ErrorText error={error} />
    </section>
  );
}
