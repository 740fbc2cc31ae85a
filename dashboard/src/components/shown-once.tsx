import type { ComponentChildren } from 'preact';
import { CopyButton } from './copy-button';

/** A secret the server gives out once (a new access token), with the warning that goes with it. */
export function ShownOnce({ title, value, label, children, onDismiss }: {
  title: string;
  value: string;
  label: string;
  children?: ComponentChildren;
  onDismiss: () => void;
}) {
  return (
    <div class="shown-once" role="region" aria-label={title}>
      <h2>{title}</h2>
      {children}
      <p class="secret-line">
        <span>{label}: </span>
        <code class="secret">{value}</code> <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
      </p>
      <p class="warning">It will not be shown again: copy it now and keep it somewhere safe.</p>
      <button type="button" class="secondary" onClick={onDismiss}>
        Done, hide it
      </button>
    </div>
  );
}
