import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A button whose action asks for confirmation first, with real buttons (not window.confirm): the
 * question and two buttons replace it until one is pressed; the confirming one takes the focus.
 */
export function ConfirmButton({ text, label, question, confirmText, onConfirm, busy }: {
  /** The button's visible text ('Revoke') and accessible name ('Revoke token web shop'). */
  text: string;
  label: string;
  question: string;
  confirmText: string;
  onConfirm: () => void;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="secondary danger" onClick={() => setAsking(true)} aria-label={label}>
        {text}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" class="danger" ref={confirm} disabled={busy} onClick={onConfirm}>
        {confirmText}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
