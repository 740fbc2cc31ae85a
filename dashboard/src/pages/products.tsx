import { useEffect, useRef, useState } from 'preact/hooks';
import { listProducts, type ProductList, type ProductQuery } from '../api';
import { ErrorText, PageHeading } from '../components';
import { queryLocation, useQuery } from '../router';
import { pageSizes } from './leads-view';
import type { PageProps } from './page';
import { ProductTable } from './products-table';
import { nextProductsPage, previousProductsPage, productsViewOf, refilteredProducts, rememberProductsList, showProductsView, type ProductsView } from './products-view';

/** How long typing must pause before the search is sent. */
const debounceMs = 300;
/** The first page refreshes itself this often, so that a product posted shows up within a couple of seconds. */
const refreshMs = 1000;

const queryOf = (view: ProductsView): ProductQuery => ({ q: view.q || undefined, limit: view.limit, cursor: view.cursor });

/**
 * The account's products, newest first (in the order they were first sent): search by productId as
 * one types, paged by the server's cursors. All of it is in the URL (products-view.ts): typing
 * replaces the history entry, a new page or page size adds one.
 */
export function ProductsPage({ license }: PageProps) {
  const location = useQuery();
  const view = productsViewOf(location);
  const [typed, setTyped] = useState(view.q);
  const [shown, setShown] = useState<{ key: string; page: ProductList } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [refreshes, setRefreshes] = useState(0);
  const asked = useRef(0);
  const shownLicense = useRef(license);

  const query = queryOf(view);
  const key = JSON.stringify([license, query]);
  const page = shown?.key === key ? shown.page : null;

  useEffect(() => rememberProductsList(location), [location]);

  // Another account (an operator's pick) starts at its own first page.
  useEffect(() => {
    if (shownLicense.current !== null && license !== shownLicense.current && view.cursor !== undefined) showProductsView(refilteredProducts(view, {}), 'replace');
    shownLicense.current = license;
  }, [license]);

  // Back, Forward or a link changed the search: the box shows it (unless it holds it, as typed).
  useEffect(() => {
    setTyped((current) => (current.trim() === view.q ? current : view.q));
  }, [view.q]);

  // Typing applies after a pause, in place of the history entry.
  useEffect(() => {
    if (typed.trim() === view.q) return;
    const timer = setTimeout(() => showProductsView(refilteredProducts(productsViewOf(queryLocation()), { q: typed.trim() }), 'replace'), debounceMs);
    return () => clearTimeout(timer);
  }, [typed]);

  useEffect(() => {
    if (!license) return;
    const mine = ++asked.current;
    // A refresh of a page nobody sees is skipped (the next one comes all the same).
    const hiddenRefresh = refreshes > 0 && document.hidden;
    (hiddenRefresh ? Promise.resolve(null) : listProducts(license, query))
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
    if (typed.trim() !== view.q) showProductsView(refilteredProducts(view, { q: typed.trim() }), 'replace');
  };
  const pageNumber = view.trail === null ? null : view.trail.length + 1;

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Products</PageHeading>
      <form class="filters" role="search" onSubmit={applyNow}>
        <div class="field">
          <label for="products-search">Search products</label>
          <input
            id="products-search"
            type="search"
            value={typed}
            placeholder="productId"
            maxLength={200}
            spellcheck={false}
            onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="products-page-size">Per page</label>
          <select
            id="products-page-size"
            value={String(view.limit)}
            onChange={(event) => showProductsView(refilteredProducts(view, { limit: Number((event.currentTarget as HTMLSelectElement).value) }), 'push')}
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
          <p role="status">Loading products…</p>
        )
      ) : page.products.length === 0 ? (
        <p role="status">
          {page.nextCursor
            ? 'No match among the products searched so far: Next page searches further.'
            : query.q
              ? 'No product matches.'
              : view.cursor
                ? 'No more products.'
                : 'No products yet: products sent to /products show up here.'}
        </p>
      ) : (
        <ProductTable products={page.products} />
      )}
      <nav class="pager" aria-label="Pages of products">
        <button type="button" class="secondary" disabled={view.cursor === undefined} onClick={() => showProductsView(previousProductsPage(view), 'push')}>
          {pageNumber === null ? 'First page' : 'Previous page'}
        </button>
        <span>{pageNumber === null ? 'A later page' : `Page ${pageNumber}`}</span>
        <button
          type="button"
          class="secondary"
          disabled={!page?.nextCursor}
          onClick={() => page?.nextCursor && showProductsView(nextProductsPage(view, page.nextCursor), 'push')}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
