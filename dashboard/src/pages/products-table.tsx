import type { ListedProduct } from '../api';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';

/** Characters of a product's properties the list shows: the product's page has them all. */
const previewChars = 120;

/** The start of a listed product's properties as JSON text (as text, never markup), or what the list left out. */
function PropertiesPreview({ product }: { product: ListedProduct }) {
  const left = product.truncated?.properties;
  if (left) return <span class="none">{`${left.bytes.toLocaleString('en')} bytes of JSON, too large for the list: open the product`}</span>;
  const json = JSON.stringify(product.properties ?? {});
  if (json === '{}') return <span class="none">none</span>;
  // By characters, not UTF-16 units: a cut never splits one.
  const characters = [...json];
  return <code class="preview">{characters.length > previewChars ? `${characters.slice(0, previewChars).join('')}…` : json}</code>;
}

export function ProductTable({ products }: { products: ListedProduct[] }) {
  return (
    <ScrollBox label="Products">
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">Properties</th>
            <th scope="col">Sent by</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {products.map((product) => (
            <tr key={product.productId}>
              <td>
                <Link href={pathTo('/products/:id', { id: product.productId })}>{product.productId}</Link>
              </td>
              <td>
                <PropertiesPreview product={product} />
              </td>
              <td>{product.sentByUserId ?? <span class="none">nobody named</span>}</td>
              <td>
                <When at={product.createdAt} />
              </td>
              <td>
                <When at={product.updatedAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
