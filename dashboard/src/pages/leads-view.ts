import { navigate, setQuery, type QueryLocation } from '../router';

/**
 * What the Leads page shows, kept in its URL (`/dashboard/leads?q=ann&kind=known&limit=10&cursor=…`)
 * so that Back from a lead, a reload or a shared link shows the same page. The cursors of the
 * pages before it (for Previous and the page's number) go with the history entry (history.state):
 * a reload and Back keep them; a link opened anew does not, and its Previous goes to the first page.
 */

export const pageSizes = [10, 25, 50, 100];
export const defaultPageSize = 25;

export type Kind = '' | 'known' | 'anonymous';

export interface LeadsView {
  q: string;
  kind: Kind;
  /** The custom attribute filter: both set, or it is off. */
  attribute: string;
  value: string;
  limit: number;
  cursor: string | undefined;
  /** Where each earlier page starts ('' for the first); null when not known (a link opened anew). */
  trail: string[] | null;
}

/** The filters the boxes of the page hold. */
export type TypedFilters = Pick<LeadsView, 'q' | 'attribute' | 'value'>;

const kinds: readonly string[] = ['known', 'anonymous'];

function trailOf(state: unknown): string[] | null {
  const trail = (state as { leadsTrail?: unknown } | null)?.leadsTrail;
  return Array.isArray(trail) && trail.every((cursor) => typeof cursor === 'string') ? (trail as string[]) : null;
}

/** The view a URL and its history entry hold; what they do not (or hold wrong) takes its default. */
export function viewOf({ query, state }: QueryLocation): LeadsView {
  const kind = query.get('kind') ?? '';
  const limit = Number(query.get('limit'));
  const cursor = query.get('cursor') || undefined;
  return {
    q: query.get('q') ?? '',
    kind: (kinds.includes(kind) ? kind : '') as Kind,
    attribute: query.get('attribute') ?? '',
    value: query.get('value') ?? '',
    limit: pageSizes.includes(limit) ? limit : defaultPageSize,
    cursor,
    trail: cursor === undefined ? [] : trailOf(state),
  };
}

/** Shows `view`: 'push' for a new page or filter (Back returns), 'replace' for what one types. */
export function showView(view: LeadsView, how: 'push' | 'replace'): void {
  setQuery(
    {
      q: view.q,
      kind: view.kind,
      attribute: view.attribute,
      value: view.attribute ? view.value : '',
      limit: view.limit === defaultPageSize ? undefined : String(view.limit),
      cursor: view.cursor,
    },
    how,
    view.trail === null ? null : { leadsTrail: view.trail },
  );
}

/** The filters as typed, trimmed as the list uses them. */
export const trimmed = (typed: TypedFilters): TypedFilters => ({ q: typed.q.trim(), attribute: typed.attribute.trim(), value: typed.value });

export const sameFilters = (a: TypedFilters, b: TypedFilters): boolean => {
  const [x, y] = [trimmed(a), trimmed(b)];
  return x.q === y.q && x.attribute === y.attribute && x.value === y.value;
};

/** `view` with other filters, from its first page. */
export const refiltered = (view: LeadsView, changes: Partial<LeadsView>): LeadsView => ({ ...view, ...changes, cursor: undefined, trail: [] });

export const nextPage = (view: LeadsView, cursor: string): LeadsView => ({
  ...view,
  cursor,
  trail: view.trail === null ? null : [...view.trail, view.cursor ?? ''],
});

/** The page before; the first when the earlier pages are not known. */
export function previousPage(view: LeadsView): LeadsView {
  if (view.trail === null || view.trail.length === 0) return refiltered(view, {});
  return { ...view, cursor: view.trail.at(-1) || undefined, trail: view.trail.slice(0, -1) };
}

let lastList: { search: string; state: unknown } = { search: '', state: null };

/** Remembers the Leads list as shown (its query string and history state), for the lead page's way back. */
export const rememberList = (location: QueryLocation): void => {
  const search = location.query.toString();
  lastList = { search: search ? `?${search}` : '', state: location.state };
};

/** The Leads list as last shown, with the earlier pages it knew. */
export const leadsListPath = (): string => `/leads${lastList.search}`;
export const goToLeadsList = (): void => navigate(leadsListPath(), lastList.state);
