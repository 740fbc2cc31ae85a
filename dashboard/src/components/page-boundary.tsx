import type { ComponentChildren } from 'preact';
import { useErrorBoundary } from 'preact/hooks';
import { PageHeading } from '../components';

/**
 * A page that throws while it renders shows what went wrong in its own place; the header, the
 * navigation and the other pages keep working. Keyed by the path (app.tsx), so moving to another
 * page starts afresh.
 */
export function PageBoundary({ title, children }: { title: string; children: ComponentChildren }) {
  const [error, reset] = useErrorBoundary();
  if (!error) return <>{children}</>;
  const text = error instanceof Error ? error.message : String(error);
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>{title}</PageHeading>
      <p class="error" role="alert">
        This page failed to show: {text}
      </p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </section>
  );
}
