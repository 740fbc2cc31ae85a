import { useEffect, useRef, useState } from 'preact/hooks';
import { createBrowserKey, listBrowserKeys, revokeBrowserKey, type BrowserKey, type CreatedBrowserKey } from '../api';
import { ErrorText } from '../components';
import { ConfirmButton } from '../components/confirm-button';
import { ScrollBox } from '../components/scroll-box';
import { ShownOnce } from '../components/shown-once';
import { useAction } from '../components/use-action';
import { When } from '../components/when';
import { EditOrigins, OriginList, originsHint, originsOf } from './browser-key-origins';
import { PageSnippets, SdkFacts, useSdkManifest } from './browser-key-snippet';

/** Where the focus goes after the list changed under it: the list itself, or a key's Edit button. */
type FocusTarget = { list: true } | { edit: string } | null;

/**
 * The account's browser keys (docs/browser.md): the public credential of a web page, bound to its
 * origins. Listed with their origins; made with a label and origins (the key shown once, with a
 * snippet for a page); their origins changed; revoked after a confirmation.
 */
export function BrowserKeys({ license }: { license: string }) {
  const [keys, setKeys] = useState<BrowserKey[] | null>(null);
  const [created, setCreated] = useState<CreatedBrowserKey | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const creating = useAction();
  const sdk = useSdkManifest();
  const list = useRef<HTMLDivElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const [focus, setFocus] = useState<FocusTarget>(null);

  useEffect(() => {
    if (!focus || !keys) return;
    // The last key revoked takes the list away: the focus goes to the section's heading then.
    if ('list' in focus) (list.current ?? heading.current)?.focus();
    else list.current?.querySelector<HTMLButtonElement>(`button[data-edit="${CSS.escape(focus.edit)}"]`)?.focus();
    setFocus(null);
  }, [focus, keys]);

  const reload = () =>
    listBrowserKeys(license).then(
      ({ browserKeys }) => setKeys(browserKeys),
      (failure: unknown) => setError(failure),
    );
  useEffect(() => {
    setKeys(null);
    setCreated(null);
    setEditing(null);
    setError(null);
    void reload();
  }, [license]);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    await creating.run(async () => {
      const made = await createBrowserKey(license, { label: String(fields.get('label') ?? ''), origins: originsOf(String(fields.get('origins') ?? '')) });
      setCreated(made);
      form.reset();
      await reload();
    });
  };

  const revoke = (id: string) =>
    run(async () => {
      await revokeBrowserKey(license, id);
      if (created?.id === id) setCreated(null);
      if (editing === id) setEditing(null);
      await reload();
      setFocus({ list: true });
    });

  const saved = async (changed: BrowserKey) => {
    if (created?.id === changed.id) setCreated({ ...created, label: changed.label, origins: changed.origins });
    // The list shows the new origins as the form goes away.
    await reload();
    setEditing(null);
    setFocus({ edit: changed.id });
  };

  const edited = keys?.find((key) => key.id === editing) ?? null;
  return (
    <section aria-labelledby="browser-keys-heading">
      <h2 id="browser-keys-heading" tabIndex={-1} ref={heading}>
        Browser keys
      </h2>
      <p class="hint">
        A browser key is the credential of a web page: public by design, it only posts items, and only from the page origins listed with it. Keep access tokens
        on servers.
      </p>
      {created ? (
        <ShownOnce
          key={created.id}
          title="New browser key"
          label="Browser key"
          value={created.browserKey}
          warning="It will not be shown again: copy it now, or a snippet that carries it."
          after={<PageSnippets manifest={sdk.manifest} error={sdk.error} license={license} browserKey={created.browserKey} />}
          onDismiss={() => setCreated(null)}
        >
          <p>
            Label {created.label}, origins {created.origins.join(', ')}.
          </p>
          <p class="hint">It is not secret: it goes into your pages, and works only from their origins.</p>
        </ShownOnce>
      ) : null}
      <ErrorText error={error} />
      {!keys ? (
        error ? null : (
          <p role="status">Loading the browser keys…</p>
        )
      ) : keys.length === 0 ? (
        <p>No browser key yet: make one below for each site that sends items from its pages.</p>
      ) : (
        <ScrollBox label="Browser keys" boxRef={list}>
          <table class="data stack browser-keys">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Origins</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((row) => (
                <tr key={row.id}>
                  <td data-label="Label">{row.label}</td>
                  <td data-label="Origins">
                    <OriginList origins={row.origins} />
                  </td>
                  <td data-label="Created">
                    <When at={row.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <When at={row.lastUsedAt} none="never" precision="minute" />
                  </td>
                  <td class="actions-cell">
                    <span class="row-actions">
                      <button
                        type="button"
                        class="secondary"
                        data-edit={row.id}
                        aria-label={`Edit origins of browser key ${row.label}`}
                        aria-expanded={editing === row.id}
                        onClick={() => setEditing(editing === row.id ? null : row.id)}
                      >
                        Edit origins
                      </button>
                      <ConfirmButton
                        text="Revoke"
                        label={`Revoke browser key ${row.label}`}
                        question={`Revoke ${row.label}? Pages using it are refused within seconds.`}
                        confirmText="Yes, revoke it"
                        busy={busy}
                        onConfirm={() => void revoke(row.id)}
                      />
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {edited ? (
        <EditOrigins
          key={edited.id}
          license={license}
          browserKey={edited}
          onSaved={saved}
          onCancel={() => {
            setEditing(null);
            setFocus({ edit: edited.id });
          }}
        />
      ) : null}
      <form class="inline-form browser-key-form" onSubmit={create}>
        <h3>Make a browser key</h3>
        <div class="field">
          <label for="browser-key-label">Key label</label>
          <input id="browser-key-label" name="label" type="text" maxLength={100} required placeholder="shop website" />
        </div>
        <div class="field">
          <label for="browser-key-origins">Allowed origins</label>
          <textarea
            id="browser-key-origins"
            name="origins"
            rows={3}
            required
            spellcheck={false}
            autocomplete="off"
            aria-describedby="browser-key-origins-hint"
            placeholder={'https://shop.example.com\nhttps://*.example.com'}
          />
          <p class="hint" id="browser-key-origins-hint">
            {originsHint}
          </p>
        </div>
        <ErrorText error={creating.error} />
        <button type="submit" disabled={creating.busy}>
          Make browser key
        </button>
      </form>
      <SdkFacts manifest={sdk.manifest} error={sdk.error} />
    </section>
  );
}
