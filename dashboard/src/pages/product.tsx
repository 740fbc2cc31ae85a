import { useEffect, useState } from 'preact/hooks';
import { ApiError, getProduct, type Product } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';
import type { PageProps } from './page';
import { ProductEvents } from './product-events';
import { goToProductsList, productsListPath } from './products-view';

/** A property's value as text: a string as it is, anything else as JSON. */
const shown = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

type Loaded = { productId: string; product: Product | null };

/**
 * One product: its latest properties, who sent them and when, and its product events (latest
 * first). A productId only product events name has no properties, but its events are shown.
 */
export function ProductPage({ license, params }: PageProps) {
  const productId = params.id ?? '';
  // Kept with the id it was loaded for: on the render that follows a new id, before the effect
  // below runs, the previous product must not be shown under the new id. Null: never submitted.
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<unknown>(null);
  const current = loaded?.productId === productId ? loaded : null;

  useEffect(() => {
    if (!license) return;
    let mine = true;
    setLoaded(null);
    setError(null);
    getProduct(license, productId).then(
      (product) => mine && setLoaded({ productId, product }),
      (failure: unknown) => mine && (failure instanceof ApiError && failure.status === 404 ? setLoaded({ productId, product: null }) : setError(failure)),
    );
    return () => {
      mine = false;
    };
  }, [license, productId]);

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Product {productId}</PageHeading>
      <p>
        <Link href={productsListPath()} onFollow={goToProductsList}>
          Back to products
        </Link>
      </p>
      <ErrorText error={error} />
      {error ? null : !current ? (
        <p role="status">Loading the product…</p>
      ) : current.product === null ? (
        <p class="note" role="note">
          Nothing was sent to /products for this productId in this account: it has no properties.
        </p>
      ) : (
        <>
          <ProductFacts product={current.product} />
          <Properties properties={current.product.properties} />
        </>
      )}
      {license && current ? <ProductEvents key={productId} license={license} productId={productId} /> : null}
    </section>
  );
}

function ProductFacts({ product }: { product: Product }) {
  return (
    <dl class="facts">
      <dt>Sent by</dt>
      <dd>{product.sentByUserId === null ? <span class="none">nobody named</span> : <Link href={pathTo('/leads/:id', { id: product.sentByUserId })}>{product.sentByUserId}</Link>}</dd>
      <dt>First sent</dt>
      <dd>
        <When at={product.createdAt} />
      </dd>
      <dt>Last changed</dt>
      <dd>
        <When at={product.updatedAt} />
      </dd>
      <dt>Submissions</dt>
      <dd>{product.version}</dd>
    </dl>
  );
}

function Properties({ properties }: { properties: Product['properties'] }) {
  const names = Object.keys(properties).sort();
  return (
    <section aria-labelledby="product-properties">
      <h2 id="product-properties">Properties</h2>
      {names.length === 0 ? (
        <p>None sent.</p>
      ) : (
        <ScrollBox label="Properties">
          <table class="data attributes">
            <thead>
              <tr>
                <th scope="col">Property</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {names.map((name) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{shown(properties[name])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
