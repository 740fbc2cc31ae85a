import { useEffect, useRef, useState } from 'preact/hooks';
import { createToken, listTokens, revokeToken, type AccessToken, type TokenScope } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ConfirmButton } from '../components/confirm-button';
import { CopyButton } from '../components/copy-button';
import { ScrollBox } from '../components/scroll-box';
import { ShownOnce } from '../components/shown-once';
import { useAction } from '../components/use-action';
import { When } from '../components/when';
import { BrowserKeys } from './browser-keys';
import { SegmentLibraries } from './segment-libraries';
import type { PageProps } from './page';

const tokenPlaceholder = '<ACCESS_TOKEN>';
/** An id no real customer has: trying an example must not overwrite a real profile. */
const exampleUserId = 'example-user-from-dashboard';

function curlExamples(base: string, token: string): { title: string; text: string }[] {
  const post = (path: string, body: object) =>
    `curl -s -X POST '${base}/${path}' \\\n  -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\\n  -d '${JSON.stringify(body)}'`;
  return [
    { title: 'Send a user', text: post('users', { userId: exampleUserId, firstName: 'Ann', email: 'ann@example.com', attributes: { plan: 'gold' } }) },
    { title: 'Send an event', text: post('events', { userId: exampleUserId, eventName: 'Signed up', eventData: { source: 'web' } }) },
  ];
}

/**
 * The account's credentials: its license code, where to send items, examples to copy, its
 * access tokens (create one, shown once; revoke one, never the last), its browser keys, and what
 * Segment's and RudderStack's libraries need to send here (with the account's address setting).
 */
export function CredentialsPage({ license }: PageProps) {
  // A token just created, while it is shown: the examples carry it, ready to run.
  const [shownToken, setShownToken] = useState<string | null>(null);
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
      <p class="hint">
        {shownToken ? 'These examples carry the new access token while it is shown.' : `Replace ${tokenPlaceholder} with an access token of this account.`}
      </p>
      {curlExamples(base, shownToken ?? tokenPlaceholder).map((example) => (
        <figure class="example" key={example.title}>
          <figcaption>
            {example.title} <CopyButton text={example.text} label={`Copy the example: ${example.title.toLowerCase()}`} />
          </figcaption>
          <pre tabIndex={0}>
            <code>{example.text}</code>
          </pre>
        </figure>
      ))}
      <Tokens license={license} onShown={setShownToken} />
      <BrowserKeys license={license} />
      <SegmentLibraries license={license} />
    </section>
  );
}

function Tokens({ license, onShown }: { license: string; onShown: (token: string | null) => void }) {
  const [tokens, setTokens] = useState<AccessToken[] | null>(null);
  const [created, setCreated] = useState<(AccessToken & { accessToken: string }) | null>(null);
  const { busy, error, setError, run } = useAction();
  const list = useRef<HTMLDivElement>(null);
  // After a revoke the row and its buttons are gone: the focus goes to the list, not to <body>.
  const [focusList, setFocusList] = useState(false);

  useEffect(() => {
    onShown(created?.accessToken ?? null);
  }, [created]);
  useEffect(() => {
    if (focusList && tokens) {
      list.current?.focus();
      setFocusList(false);
    }
  }, [focusList, tokens]);

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
      setFocusList(true);
    });

  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      <p class="hint">Scope ingest posts items only; ingest+read also reads, signs in here and manages tokens.</p>
      {created ? (
        <ShownOnce key={created.id} title="New access token" label="Access token" value={created.accessToken} onDismiss={() => setCreated(null)}>
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
        <ScrollBox label="Access tokens" boxRef={list}>
          <table class="data stack">
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
                  <td data-label="Label">{row.label}</td>
                  <td data-label="Scope">{row.scope}</td>
                  <td data-label="Created">
                    <When at={row.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <When at={row.lastUsedAt} none="never" precision="minute" />
                  </td>
                  <td class="actions-cell">
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
