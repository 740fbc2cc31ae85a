import { useEffect, useRef } from 'preact/hooks';
import { changeBrowserKey, type BrowserKey } from '../api';
import { ErrorText } from '../components';
import { useAction } from '../components/use-action';

/** The origins typed in a box, one per line: blank lines and spaces around each left out (the server checks the rest). */
export const originsOf = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

export const originsHint = 'One per line: https://shop.example.com, http://localhost:5173, or https://*.example.com for its subdomains. At most 50.';

/** The origins of a key, one per line in its own list. */
export function OriginList({ origins }: { origins: string[] }) {
  return (
    <ul class="origins">
      {origins.map((origin) => (
        <li key={origin}>
          <code>{origin}</code>
        </li>
      ))}
    </ul>
  );
}

/**
 * The form that changes a key's origins (PATCH), under the list: it takes the focus as it opens;
 * the server's refusal is shown in it, the text kept for another try.
 */
export function EditOrigins({ license, browserKey, onSaved, onCancel }: {
  license: string;
  browserKey: BrowserKey;
  onSaved: (changed: BrowserKey) => Promise<void>;
  onCancel: () => void;
}) {
  const { busy, error, run } = useAction();
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => box.current?.focus(), [browserKey.id]);
  const fieldId = 'browser-key-edit-origins';

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    const text = box.current?.value ?? '';
    await run(async () => {
      const changed = await changeBrowserKey(license, browserKey.id, { origins: originsOf(text) });
      await onSaved(changed);
    });
  };

  return (
    <form class="inline-form origins-form" aria-label={`Edit the origins of ${browserKey.label}`} onSubmit={save}>
      <h3>Origins of {browserKey.label}</h3>
      <div class="field">
        <label for={fieldId}>Allowed origins of {browserKey.label}</label>
        <textarea
          id={fieldId}
          name="origins"
          ref={box}
          rows={Math.min(Math.max(browserKey.origins.length + 1, 3), 10)}
          required
          spellcheck={false}
          autocomplete="off"
          aria-describedby={`${fieldId}-hint`}
          defaultValue={browserKey.origins.join('\n')}
        />
        <p class="hint" id={`${fieldId}-hint`}>
          {originsHint} A page of an origin taken out is refused within seconds.
        </p>
      </div>
      <ErrorText error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save origins
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
