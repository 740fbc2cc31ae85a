import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from './copy-button';

const keepItSafe = 'It will not be shown again: copy it now and keep it somewhere safe.';

/**
 * A secret the server gives out once (a new access token), with the warning that goes with it. It
 * takes the focus on its Copy button as it appears: copying it is what comes next. `children` come
 * before the value, `after` after the warning (a snippet that carries the value).
 */
export function ShownOnce({ title, value, label, children, after, warning = keepItSafe, onDismiss }: {
  title: string;
  value: string;
  label: string;
  children?: ComponentChildren;
  after?: ComponentChildren;
  warning?: string;
  onDismiss: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.querySelector<HTMLButtonElement>('.secret-line button')?.focus();
  }, []);
  return (
    <div class="shown-once" role="region" aria-label={title} ref={box}>
      <h2>{title}</h2>
      {children}
      <p class="secret-line">
        <span>{label}: </span>
        <code class="secret">{value}</code> <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
      </p>
      <p class="warning">{warning}</p>
      {after}
      <button type="button" class="secondary" onClick={onDismiss}>
        Done, hide it
      </button>
    </div>
  );
}
