import { takingAdminToken } from './admin-operations.js';
import { limitParameter, serverTiming } from './components.js';
import { closedObject, orNull, schemaRef, withOptional, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** The account's products and their product events (docs/api.md, Products), in the read API. */

const products = '/admin/v1/accounts/:license/products';
const instant = { type: 'string', format: 'date-time' };
const query = (name: string, description: string, schema: JsonObject): JsonObject => ({ name, in: 'query', required: false, description, schema });
const cursorParameter = query('cursor', 'The `nextCursor` of an earlier page; another list\'s, or text this API did not give out: 400 naming `cursor`.', { type: 'string' });
const nextCursor = orNull('string', { description: 'The `cursor` of the next page; null at the end. A page ends at its `limit` or before the item that would take it past 1 MiB of JSON (docs/api.md, Read replies bounded in bytes).' });
const truncated = { ...schemaRef('Truncated'), description: 'Only when a payload was too large for a list (over 4 KiB of JSON text): it holds null, and this says so by its field name.' };
const properties = { type: 'object', description: 'The properties of the latest submission, as sent.' };

/** Fields a product has in full and in a list. */
const productFields: Record<string, JsonObject> = {
  productId: { type: 'string' },
  sentByUserId: orNull('string', { description: 'The userId sent with the latest submission; null when it had none.' }),
  createdAt: { ...instant, description: 'When its first submission was received.' },
  updatedAt: { ...instant, description: 'When its latest submission was received.' },
  version: { type: 'integer', minimum: 1, description: 'Submissions applied.' },
};

export const productSchemas: Record<string, JsonObject> = {
  Product: closedObject({ ...productFields, properties }, { description: 'A product: the latest properties sent to /products for its productId, and who sent them.' }),
  ListedProduct: withOptional(
    closedObject(
      { ...productFields, properties: { ...properties, type: ['object', 'null'] } },
      { description: 'A product as the list shows it: `properties` null when too large for a list (`truncated`); `GET .../products/{productId}` gives them in full.' },
    ),
    { truncated },
  ),
  ProductPage: closedObject({
    products: { type: 'array', items: schemaRef('ListedProduct'), description: 'Newest first: in the order products were first sent, ties by productId.' },
    nextCursor,
  }),
  ProductEvents: closedObject({
    events: {
      type: 'array',
      description: 'Latest first, by `eventTimeUtc`.',
      items: withOptional(
        closedObject({
          eventId: { type: 'string', format: 'uuid' },
          userId: orNull('string', { description: 'The userId sent with it; null when none was.' }),
          eventName: { type: 'string' },
          eventTime: orNull('string', { description: 'As sent: a zone-less time is read as UTC, so show `eventTimeUtc`.' }),
          eventTimeUtc: { ...instant, description: 'The UTC instant of `eventTime` (its receipt when none was sent).' },
          eventData: orNull('object', { description: 'Null when too large for a list (`truncated`): `GET .../events/{eventId}` gives the event in full.' }),
          receivedAt: instant,
          trackID: orNull('string', { format: 'uuid', description: 'Null until the track index has the event.' }),
        }),
        { truncated },
      ),
    },
    nextCursor,
  }),
};

const read = (path: string, operationId: string, summary: string, description: string, schema: string, parameters?: JsonObject[]): OperationDoc => ({
  method: 'get',
  path: `${products}${path}`,
  operationId,
  tag: 'Read API',
  summary,
  description,
  access: 'account',
  usesStore: true,
  ...(parameters ? { parameters } : {}),
  responses: { 200: jsonReply(summary, schemaRef(schema), serverTiming) },
});

export const productOperations: OperationDoc[] = takingAdminToken([
  read(
    '',
    'list-products',
    'Products, newest first',
    'A page of the products sent to /products, in the order they were first sent (a later submission does not move one), with the cursor of the next; at most 1 MiB of JSON, `properties` left out when over 4 KiB (`truncated`: `GET .../products/{productId}` gives them). ' +
      'A `q` walks at most 50,000 products a request: its page may be short, even empty, with a `nextCursor` to go on.',
    'ProductPage',
    [query('q', 'Finds productIds holding this text, whatever the case; at most 200 characters.', { type: 'string', maxLength: 200 }), limitParameter(500, 50), cursorParameter],
  ),
  read('/:productId', 'get-product', 'One product', 'Its latest properties in full. A productId never sent to /products (even one product events name): 404.', 'Product'),
  read(
    '/:productId/events',
    'list-product-events',
    "A product's events, latest first",
    'The product events sent for it, also for a productId never sent to /products; a productId the account knows from neither: 404. ' +
      'A page ends at `limit` or before the item that would take it past 1 MiB of JSON, with a `nextCursor`; `eventData` over 4 KiB of JSON is left out (`truncated`), `GET .../events/{eventId}` gives it.',
    'ProductEvents',
    [limitParameter(500, 50), cursorParameter],
  ),
]);
