import { When } from './when';

/** Which erasure made an event unreadable, and when (both null: its key is gone and nothing says why). */
export interface ErasedBy {
  erasureId: string | null;
  erasedAt: string | null;
}

/** A short mark beside an erased item's type: "erased". */
export function ErasedBadge() {
  return <span class="erased-badge">erased</span>;
}

/**
 * That an event was erased, by which erasure and when, in place of what the person sent (which
 * reads empty once erased: shown as data it would look like nothing was sent).
 */
export function ErasedNote({ erasedBy, compact = false }: { erasedBy: ErasedBy; compact?: boolean }) {
  const by =
    erasedBy.erasureId !== null ? (
      <>
        by erasure <code class="erasure-id">{erasedBy.erasureId}</code>
        {erasedBy.erasedAt ? (
          <>
            {' '}
            at <When at={erasedBy.erasedAt} />
          </>
        ) : null}
      </>
    ) : (
      <>by no recorded erasure: its key is gone</>
    );
  if (compact) {
    return (
      <span class="erased-note">
        <strong>Erased</strong> {by}
      </span>
    );
  }
  return (
    <p class="erased-note">
      <strong>Erased</strong> {by}. What the person sent can no longer be read; the event's type, times, trackID and ids' pseudonyms remain.
    </p>
  );
}

const isEmpty = (value: unknown): boolean =>
  value === null || value === '' || (typeof value === 'object' && Object.keys(value as object).length === 0);

/**
 * What an erased event's data still holds readable (the ids' pseudonyms, the product, the event's
 * instant): its fields less those the erasure emptied.
 */
export function readableRemains(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => !isEmpty(value)));
}
