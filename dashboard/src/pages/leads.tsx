import { useEffect, useRef, useState } from 'preact/hooks';
import { listLeads, type Lead, type LeadQuery } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';
import type { PageProps } from './page';

/** How long typing must pause before the search is sent. */
const debounceMs = 300;
/** The first page refreshes itself this often, so that a lead posted shows up within a couple of seconds. */
const refreshMs = 1000;
const pageSizes = [10, 25, 50, 100];

type Kind = '' | 'known' | 'anonymous';

/** The id a lead is known by: its userId, else its anonymous id. */
export const leadIdOf = (lead: Lead): string => lead.userId ?? lead.anonymousId ?? '';

export const nameOf = (lead: Pick<Lead, 'firstName' | 'lastName'>): string => [lead.firstName, lead.lastName].filter(Boolean).join(' ');

/**
 * The account's leads, newest first: search (ids, email, names) as one types, known or anonymous,
 * paged by the server's cursors (a stack of them, for Previous).
 */
export function LeadsPage({ license }: PageProps) {
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const [kind, setKind] = useState<Kind>('');
  const [limit, setLimit] = useState(25);
  // cursors[i] is where page i+2 starts; the page shown is cursors.length + 1.
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<{ leads: Lead[]; nextCursor: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [refreshes, setRefreshes] = useState(0);
  const asked = useRef(0);

  // A new search or filter starts again at the first page.
  const restart = () => {
    setCursors([]);
    setPage(null);
  };

  // Another account (an operator's pick) starts at its own first page.
  useEffect(restart, [license]);

  useEffect(() => {
    if (typed.trim() === q) return;
    const timer = setTimeout(() => {
      setQ(typed.trim());
      restart();
    }, debounceMs);
    return () => clearTimeout(timer);
  }, [typed]);

  const cursor = cursors.at(-1);
  useEffect(() => {
    if (!license) return;
    const query: LeadQuery = { q: q || undefined, kind: kind || undefined, limit, cursor };
    const mine = ++asked.current;
    // A refresh of a page nobody sees is skipped (the next one comes all the same).
    const hiddenRefresh = refreshes > 0 && document.hidden;
    (hiddenRefresh ? Promise.resolve(null) : listLeads(license, query))
      .then((found) => {
        if (!found || mine !== asked.current) return;
        setPage(found);
        setError(null);
      })
      .catch((failure: unknown) => {
        if (mine === asked.current) setError(failure);
      });
    if (cursor !== undefined) return;
    const timer = setTimeout(() => setRefreshes((n) => n + 1), refreshMs);
    return () => clearTimeout(timer);
  }, [license, q, kind, limit, cursor, refreshes]);

  const searchNow = (event: SubmitEvent) => {
    event.preventDefault();
    if (typed.trim() !== q) {
      setQ(typed.trim());
      restart();
    }
  };

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Leads</PageHeading>
      <form class="filters" role="search" onSubmit={searchNow}>
        <div class="field">
          <label for="leads-search">Search leads</label>
          <input
            id="leads-search"
            type="search"
            value={typed}
            placeholder="id, email or name"
            maxLength={200}
            spellcheck={false}
            onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="leads-kind">Kind</label>
          <select
            id="leads-kind"
            value={kind}
            onChange={(event) => {
              setKind((event.currentTarget as HTMLSelectElement).value as Kind);
              restart();
            }}
          >
            <option value="">Known and anonymous</option>
            <option value="known">Known (with a userId)</option>
            <option value="anonymous">Anonymous</option>
          </select>
        </div>
        <div class="field">
          <label for="leads-page-size">Per page</label>
          <select
            id="leads-page-size"
            value={String(limit)}
            onChange={(event) => {
              setLimit(Number((event.currentTarget as HTMLSelectElement).value));
              restart();
            }}
          >
            {pageSizes.map((size) => (
              <option key={size} value={String(size)}>
                {size}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorText error={error} />
      {!page ? (
        error ? null : (
          <p role="status">Loading leads…</p>
        )
      ) : page.leads.length === 0 ? (
        <p role="status">
          {page.nextCursor
            ? 'No match among the leads searched so far: Next page searches further.'
            : q || kind
              ? 'No lead matches.'
              : cursors.length
                ? 'No more leads.'
                : 'No leads yet: profiles sent to /users show up here.'}
        </p>
      ) : (
        <LeadTable leads={page.leads} />
      )}
      <nav class="pager" aria-label="Pages of leads">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>Page {cursors.length + 1}</span>
        <button
          type="button"
          class="secondary"
          disabled={!page?.nextCursor}
          onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}

function LeadTable({ leads }: { leads: Lead[] }) {
  return (
    <ScrollBox label="Leads">
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Identifier</th>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {leads.map((lead) => {
            const id = leadIdOf(lead);
            return (
              <tr key={id}>
                <td>
                  <Link href={pathTo('/leads/:id', { id })}>{id}</Link>
                  {lead.userId === null ? <span class="tag"> anonymous</span> : null}
                </td>
                <td>{nameOf(lead)}</td>
                <td>{typeof lead.email === 'string' ? lead.email : ''}</td>
                <td>
                  <When at={lead.createdAt} />
                </td>
                <td>
                  <When at={lead.updatedAt} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
