import { useEffect, useRef, useState } from 'preact/hooks';
import { getErasure, listErasures, requestErasure, type Erasure, type NewErasure } from '../api';
import { ErrorText, PageHeading } from '../components';
import { EraseConfirm, personText, suppressLabel } from '../components/erase-confirm';
import { usePolling } from '../components/polling';
import { useAction } from '../components/use-action';
import { navigate, useQuery } from '../router';
import { ErasureTable } from './erasures-table';
import type { PageProps } from './page';

export const erasuresPath = '/erasures';
const pageSize = 20;
/** While an erasure is pending: it takes seconds, and the page shows it done soon after. */
const refreshMs = 2_000;

/** The history state of the Erasures page: the erasure just requested elsewhere (the lead page). */
interface Arrived {
  requested: Erasure;
}

const arrivedWith = (state: unknown): Erasure | null =>
  typeof state === 'object' && state !== null && 'requested' in state ? ((state as Arrived).requested ?? null) : null;

/** Shows the Erasures page, telling it of `erasure`, just requested. */
export const showRequested = (erasure: Erasure): void => navigate(erasuresPath, { requested: erasure } satisfies Arrived);

const newest = (a: Erasure, b: Erasure): number => Date.parse(b.requestedAt) - Date.parse(a.requestedAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** `shown` with `fresh` in place of the same ids and added where new, latest first: a refresh never drops a row shown. */
function merged(shown: Erasure[], fresh: Erasure[]): Erasure[] {
  const byId = new Map(shown.map((erasure) => [erasure.id, erasure]));
  for (const erasure of fresh) byId.set(erasure.id, erasure);
  return [...byId.values()].sort(newest);
}

/**
 * The account's erasures (a person's values erased, docs/api.md Erasure), latest first, followed
 * every 2 seconds while one is pending, and a form to request one, confirmed first.
 */
export function ErasuresPage({ license }: PageProps) {
  const { state } = useQuery();
  const [requested, setRequested] = useState<Erasure | null>(() => arrivedWith(state));
  const [shown, setShown] = useState<Erasure[] | null>(null);
  /** The cursor of the next older page; `older` once one was asked for, so a refresh no longer sets it. */
  const [next, setNext] = useState<{ cursor: string | null; older: boolean }>({ cursor: null, older: false });
  const [error, setError] = useState<unknown>(null);
  const said = useRef<HTMLParagraphElement>(null);
  const [focusSaid, setFocusSaid] = useState(false);

  const pending = shown === null || shown.some((erasure) => erasure.state === 'pending');
  usePolling(
    async (wanted) => {
      if (!license) return;
      try {
        const page = await listErasures(license, { limit: pageSize });
        const onPage = new Set(page.erasures.map((erasure) => erasure.id));
        // Pending ones of older pages, one by one: the first page no longer holds them.
        const older = await Promise.all((shown ?? []).filter((erasure) => erasure.state === 'pending' && !onPage.has(erasure.id)).map((erasure) => getErasure(license, erasure.id)));
        if (!wanted()) return;
        setShown((current) => merged(current ?? [], [...page.erasures, ...older]));
        setNext((current) => (current.older ? current : { cursor: page.nextCursor, older: false }));
        setError(null);
      } catch (failure) {
        if (wanted()) setError(failure);
      }
    },
    refreshMs,
    license !== null && pending,
    license,
  );

  useEffect(() => {
    if (focusSaid) said.current?.focus();
    setFocusSaid(false);
  }, [focusSaid]);

  const showOlder = (cursor: string) => {
    if (!license) return;
    listErasures(license, { limit: pageSize, cursor }).then((page) => {
      setShown((current) => merged(current ?? [], page.erasures));
      setNext({ cursor: page.nextCursor, older: true });
    }, setError);
  };

  if (!license) return null;
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Erasures</PageHeading>
      <p class="hint">
        Erasing a person makes every value they sent unreadable and removes them from the leads, the ingestion warnings and the recorded replies; their
        trackIDs, event types and times remain. It runs in the background and is usually done within seconds.
      </p>
      <RequestForm
        license={license}
        onRequested={(erasure) => {
          setRequested(erasure);
          setShown((current) => merged(current ?? [], [erasure]));
          setFocusSaid(true);
        }}
      />
      {requested ? (
        <p class="note" role="status" tabIndex={-1} ref={said}>
          Requested the erasure of {personText(requested)}
          {requested.suppress ? ', refusing their new items' : ''}.
        </p>
      ) : null}
      <h2 id="erasures-list">Requests, latest first</h2>
      <ErrorText error={error} />
      {shown === null ? (
        error ? null : (
          <p role="status">Loading the erasures…</p>
        )
      ) : shown.length === 0 ? (
        <p>No erasure was requested for this account.</p>
      ) : (
        <>
          <p class="hint">{pending ? 'Refreshed every 2 seconds while one is pending.' : 'None is pending.'}</p>
          <ErasureTable erasures={shown} highlight={requested?.id ?? null} />
          {next.cursor !== null ? (
            <p class="pager">
              <button type="button" class="secondary" onClick={() => showOlder(next.cursor as string)}>
                Show older erasures
              </button>
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

/** The ids as typed (empty ones left out), or null without any. */
function newErasure(userId: string, anonymousId: string, suppress: boolean): NewErasure | null {
  if (userId !== '') return anonymousId !== '' ? { userId, anonymousId, suppress } : { userId, suppress };
  return anonymousId !== '' ? { anonymousId, suppress } : null;
}

/** The form: a userId, an anonymousId or both, and suppress; the confirmation names what was typed. */
function RequestForm({ license, onRequested }: { license: string; onRequested: (erasure: Erasure) => void }) {
  const [userId, setUserId] = useState('');
  const [anonymousId, setAnonymousId] = useState('');
  const [suppress, setSuppress] = useState(false);
  const [asking, setAsking] = useState<NewErasure | null>(null);
  const [refocus, setRefocus] = useState(false);
  const { busy, error, setError, run } = useAction();
  const submit = useRef<HTMLButtonElement>(null);

  // Back to the form's button once the confirmation is gone (it is enabled again by then).
  useEffect(() => {
    if (refocus) submit.current?.focus();
    setRefocus(false);
  }, [refocus]);

  const ask = (event: SubmitEvent) => {
    event.preventDefault();
    const asked = newErasure(userId, anonymousId, suppress);
    setError(asked ? null : new Error('Give a userId, an anonymousId or both.'));
    setAsking(asked);
  };
  const cancel = () => {
    setAsking(null);
    setRefocus(true);
  };
  const erase = (asked: NewErasure) =>
    run(async () => {
      try {
        const erasure = await requestErasure(license, asked);
        setUserId('');
        setAnonymousId('');
        setSuppress(false);
        onRequested(erasure);
      } catch (failure) {
        setRefocus(true);
        throw failure;
      } finally {
        setAsking(null);
      }
    });

  const text = (set: (value: string) => void) => (event: Event) => set((event.currentTarget as HTMLInputElement).value);
  return (
    <>
      <form class="inline-form erase-form" aria-labelledby="erase-heading" onSubmit={ask}>
        <h2 id="erase-heading">Erase a person</h2>
        <p class="hint">A userId also erases every anonymous id merged into it.</p>
        <div class="field">
          <label for="erase-user-id">userId</label>
          <input id="erase-user-id" type="text" maxLength={255} autoComplete="off" spellcheck={false} value={userId} onInput={text(setUserId)} />
        </div>
        <div class="field">
          <label for="erase-anonymous-id">anonymousId</label>
          <input id="erase-anonymous-id" type="text" maxLength={255} autoComplete="off" spellcheck={false} value={anonymousId} onInput={text(setAnonymousId)} />
        </div>
        <label class="check">
          <input type="checkbox" checked={suppress} onChange={(event) => setSuppress((event.currentTarget as HTMLInputElement).checked)} />
          <span>{suppressLabel}</span>
        </label>
        <button type="submit" ref={submit} disabled={busy || asking !== null} aria-expanded={asking !== null} aria-controls={asking ? 'erase-confirm' : undefined}>
          Request erasure…
        </button>
      </form>
      {asking ? <EraseConfirm id="erase-confirm" person={asking} suppress={asking.suppress === true} busy={busy} onConfirm={() => void erase(asking)} onCancel={cancel} /> : null}
      <ErrorText error={error} />
    </>
  );
}
