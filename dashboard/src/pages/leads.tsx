import { useEffect, useRef, useState } from 'preact/hooks';
import { listLeads, type LeadPage, type LeadQuery } from '../api';
import { ErrorText, PageHeading } from '../components';
import { queryLocation, useQuery } from '../router';
import { LeadsTotal, LeadTable } from './leads-table';
import {
  nextPage,
  pageSizes,
  previousPage,
  refiltered,
  rememberList,
  sameFilters,
  showView,
  trimmed,
  viewOf,
  type Kind,
  type LeadsView,
  type TypedFilters,
} from './leads-view';
import type { PageProps } from './page';

export { leadIdOf, nameOf } from './leads-table';

/** How long typing must pause before the search is sent. */
const debounceMs = 300;
/** The first page refreshes itself this often, so that a lead posted shows up within a couple of seconds. */
const refreshMs = 1000;

/** What the server is asked for a view: the attribute filter only once both its boxes hold something. */
function queryOf(view: LeadsView): LeadQuery {
  const filtered = view.attribute !== '' && view.value !== '';
  return {
    q: view.q || undefined,
    kind: view.kind || undefined,
    attribute: filtered ? view.attribute : undefined,
    value: filtered ? view.value : undefined,
    limit: view.limit,
    cursor: view.cursor,
  };
}

/**
 * The account's leads, newest first, with their total: search (ids, email, names) as one types,
 * known or anonymous, a custom attribute's value, paged by the server's cursors. All of it is in
 * the URL (leads-view.ts): typing replaces the history entry, a new page or filter adds one.
 */
export function LeadsPage({ license }: PageProps) {
  const location = useQuery();
  const view = viewOf(location);
  const [typed, setTyped] = useState<TypedFilters>({ q: view.q, attribute: view.attribute, value: view.value });
  const [shown, setShown] = useState<{ key: string; page: LeadPage } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [refreshes, setRefreshes] = useState(0);
  const asked = useRef(0);
  const shownLicense = useRef(license);

  const query = queryOf(view);
  const key = JSON.stringify([license, query]);
  const page = shown?.key === key ? shown.page : null;

  useEffect(() => rememberList(location), [location]);

  // Another account (an operator's pick) starts at its own first page.
  useEffect(() => {
    if (shownLicense.current !== null && license !== shownLicense.current && view.cursor !== undefined) showView(refiltered(view, {}), 'replace');
    shownLicense.current = license;
  }, [license]);

  // Back, Forward or a link changed the filters: the boxes show them (unless they hold them, as typed).
  useEffect(() => {
    setTyped((current) => (sameFilters(current, view) ? current : { q: view.q, attribute: view.attribute, value: view.value }));
  }, [view.q, view.attribute, view.value]);

  // Typing applies after a pause, in place of the history entry.
  useEffect(() => {
    if (sameFilters(typed, view)) return;
    const timer = setTimeout(() => showView(refiltered(viewOf(queryLocation()), trimmed(typed)), 'replace'), debounceMs);
    return () => clearTimeout(timer);
  }, [typed]);

  useEffect(() => {
    if (!license) return;
    const mine = ++asked.current;
    // A refresh of a page nobody sees is skipped (the next one comes all the same).
    const hiddenRefresh = refreshes > 0 && document.hidden;
    (hiddenRefresh ? Promise.resolve(null) : listLeads(license, query))
      .then((found) => {
        if (!found || mine !== asked.current) return;
        setShown({ key, page: found });
        setError(null);
      })
      .catch((failure: unknown) => {
        if (mine === asked.current) setError(failure);
      });
    if (view.cursor !== undefined) return;
    const timer = setTimeout(() => setRefreshes((n) => n + 1), refreshMs);
    return () => clearTimeout(timer);
  }, [key, refreshes]);

  const applyNow = (event: SubmitEvent) => {
    event.preventDefault();
    if (!sameFilters(typed, view)) showView(refiltered(view, trimmed(typed)), 'replace');
  };
  const type = (field: keyof TypedFilters) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement).value;
    setTyped((current) => ({ ...current, [field]: value }));
  };
  const pageNumber = view.trail === null ? null : view.trail.length + 1;
  const filtered = Boolean(query.q || query.kind || query.attribute);

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Leads</PageHeading>
      <form class="filters" role="search" onSubmit={applyNow}>
        <div class="field">
          <label for="leads-search">Search leads</label>
          <input id="leads-search" type="search" value={typed.q} placeholder="id, email or name" maxLength={200} spellcheck={false} onInput={type('q')} />
        </div>
        <div class="field">
          <label for="leads-kind">Kind</label>
          <select
            id="leads-kind"
            value={view.kind}
            onChange={(event) => showView(refiltered(view, { kind: (event.currentTarget as HTMLSelectElement).value as Kind }), 'push')}
          >
            <option value="">Known and anonymous</option>
            <option value="known">Known (with a userId)</option>
            <option value="anonymous">Anonymous</option>
          </select>
        </div>
        <div class="field">
          <label for="leads-attribute">Custom attribute</label>
          <input id="leads-attribute" class="attribute" type="text" value={typed.attribute} placeholder="plan" maxLength={100} spellcheck={false} onInput={type('attribute')} />
        </div>
        <div class="field">
          <label for="leads-attribute-value">Attribute value</label>
          <input id="leads-attribute-value" class="attribute" type="text" value={typed.value} placeholder="gold" maxLength={1000} spellcheck={false} onInput={type('value')} />
        </div>
        <div class="field">
          <label for="leads-page-size">Per page</label>
          <select
            id="leads-page-size"
            value={String(view.limit)}
            onChange={(event) => showView(refiltered(view, { limit: Number((event.currentTarget as HTMLSelectElement).value) }), 'push')}
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
      {page ? <LeadsTotal total={page.total} /> : null}
      {!page ? (
        error ? null : (
          <p role="status">Loading leads…</p>
        )
      ) : page.leads.length === 0 ? (
        <p role="status">
          {page.nextCursor
            ? 'No match among the leads searched so far: Next page searches further.'
            : filtered
              ? 'No lead matches.'
              : view.cursor
                ? 'No more leads.'
                : 'No leads yet: profiles sent to /users show up here.'}
        </p>
      ) : (
        <LeadTable leads={page.leads} />
      )}
      <nav class="pager" aria-label="Pages of leads">
        <button type="button" class="secondary" disabled={view.cursor === undefined} onClick={() => showView(previousPage(view), 'push')}>
          {pageNumber === null ? 'First page' : 'Previous page'}
        </button>
        <span>{pageNumber === null ? 'A later page' : `Page ${pageNumber}`}</span>
        <button
          type="button"
          class="secondary"
          disabled={!page?.nextCursor}
          onClick={() => page?.nextCursor && showView(nextPage(view, page.nextCursor), 'push')}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
