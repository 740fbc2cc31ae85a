import { useState } from 'preact/hooks';

/**
 * Copies `text` with the clipboard API where the browser allows it (a secure context and the
 * user's permission); otherwise says so: the text beside it stays selectable.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'refused'>('idle');
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('refused');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" aria-label={label} onClick={copy}>
        Copy
      </button>
      <span role="status" class="hint">
        {state === 'copied' ? 'Copied.' : state === 'refused' ? 'The browser did not allow copying here: select the text instead.' : ''}
      </span>
    </span>
  );
}
