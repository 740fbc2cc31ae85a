import type { ComponentChildren } from 'preact';

/**
 * The heading of a page. It takes the focus when the page is shown (app.tsx), so that a keyboard or
 * screen reader user lands on the new page rather than on the link they followed.
 */
export function PageHeading({ children }: { children: ComponentChildren }) {
  return (
    <h1 id="page-heading" tabIndex={-1}>
      {children}
    </h1>
  );
}

/** An error told as text (never markup), announced to screen readers. */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}
