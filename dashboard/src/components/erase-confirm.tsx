import { useEffect, useId, useRef } from 'preact/hooks';

/** Whom an erasure names: a userId, an anonymousId, or both. */
export interface Person {
  userId?: string | null;
  anonymousId?: string | null;
}

/** How the dashboard names a person: `u-42`, `anonymous id a-7`, or `u-42 and anonymous id a-7`. */
export function personText({ userId, anonymousId }: Person): string {
  const anonymous = anonymousId ? `anonymous id ${anonymousId}` : '';
  if (userId && anonymous) return `${userId} and ${anonymous}`;
  return userId || anonymous;
}

export const suppressLabel = 'Also refuse new items for these ids (suppress)';

/**
 * The confirmation of an erasure, naming the person, with real buttons (not window.confirm). Its
 * first control takes the focus when it opens; Escape cancels. With `onSuppress` it offers the
 * suppress checkbox, else it says what was chosen. The caller returns the focus on cancel.
 */
export function EraseConfirm({ person, suppress, onSuppress, busy, onConfirm, onCancel, id }: {
  person: Person;
  suppress: boolean;
  onSuppress?: (suppress: boolean) => void;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  /** The element's id, for the opener's aria-controls. */
  id?: string;
}) {
  const questionId = useId();
  const checkbox = useRef<HTMLInputElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    (checkbox.current ?? confirm.current)?.focus();
  }, []);
  const escape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    onCancel();
  };
  return (
    <div class="confirm-erase" role="group" id={id} aria-labelledby={questionId} onKeyDown={escape}>
      <p id={questionId} class="question">
        Erase {personText(person)} and everything they sent? This cannot be undone.
      </p>
      {onSuppress ? (
        <label class="check">
          <input type="checkbox" ref={checkbox} checked={suppress} onChange={(event) => onSuppress((event.currentTarget as HTMLInputElement).checked)} />
          <span>{suppressLabel}</span>
        </label>
      ) : (
        <p class="hint">{suppress ? 'New items naming these ids will be refused from now on.' : 'New items naming these ids will still be accepted.'}</p>
      )}
      <div class="actions">
        <button type="button" class="danger" ref={confirm} disabled={busy} onClick={onConfirm}>
          Yes, erase
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
