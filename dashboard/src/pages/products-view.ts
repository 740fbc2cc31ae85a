import { navigate, setQuery, type QueryLocation } from '../router';
import { defaultPageSize, pageSizes } from './leads-view';

/**
 * What the Products page shows, kept in its URL (`/dashboard/products?q=shirt&limit=10&cursor=…`)
 * so that Back from a product, a reload or a shared link shows the same page; the cursors of the
 * pages before it go with the history entry, as the Leads page keeps them (leads-view.ts).
 */

export interface ProductsView {
  q: string;
  limit: number;
  cursor: string | undefined;
  /** Where each earlier page starts ('' for the first); null when not known (a link opened anew). */
  trail: string[] | null;
}

function trailOf(state: unknown): string[] | null {
  const trail = (state as { productsTrail?: unknown } | null)?.productsTrail;
  return Array.isArray(trail) && trail.every((cursor) => typeof cursor === 'string') ? (trail as string[]) : null;
}

/** The view a URL and its history entry hold; what they do not (or hold wrong) takes its default. */
export function productsViewOf({ query, state }: QueryLocation): ProductsView {
  const limit = Number(query.get('limit'));
  const cursor = query.get('cursor') || undefined;
  return {
    q: query.get('q') ?? '',
    limit: pageSizes.includes(limit) ? limit : defaultPageSize,
    cursor,
    trail: cursor === undefined ? [] : trailOf(state),
  };
}

/** Shows `view`: 'push' for a new page or page size (Back returns), 'replace' for what one types. */
export function showProductsView(view: ProductsView, how: 'push' | 'replace'): void {
  const limit = view.limit === defaultPageSize ? undefined : String(view.limit);
  setQuery({ q: view.q, limit, cursor: view.cursor }, how, view.trail === null ? null : { productsTrail: view.trail });
}

/** `view` with other filters, from its first page. */
export const refilteredProducts = (view: ProductsView, changes: Partial<ProductsView>): ProductsView => ({ ...view, ...changes, cursor: undefined, trail: [] });

export const nextProductsPage = (view: ProductsView, cursor: string): ProductsView => ({
  ...view,
  cursor,
  trail: view.trail === null ? null : [...view.trail, view.cursor ?? ''],
});

/** The page before; the first when the earlier pages are not known. */
export function previousProductsPage(view: ProductsView): ProductsView {
  if (view.trail === null || view.trail.length === 0) return refilteredProducts(view, {});
  return { ...view, cursor: view.trail.at(-1) || undefined, trail: view.trail.slice(0, -1) };
}

let lastList: { search: string; state: unknown } = { search: '', state: null };

/** Remembers the Products list as shown (its query string and history state), for the product page's way back. */
export const rememberProductsList = (location: QueryLocation): void => {
  const search = location.query.toString();
  lastList = { search: search ? `?${search}` : '', state: location.state };
};

/** The Products list as last shown, with the earlier pages it knew. */
export const productsListPath = (): string => `/products${lastList.search}`;
export const goToProductsList = (): void => navigate(productsListPath(), lastList.state);
