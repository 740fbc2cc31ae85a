import type { Pool } from '../../src/db/pool.js';
import { countFitting, decodeCursorOf, encodeCursorOf, payloadOf, truncatedField, type Truncations } from '../reply-bytes.js';
import { listProducts, oneProduct, productEvents, productKnown, searchProducts } from './queries-sql.js';

/**
 * Read queries on the products model (docs/api.md, Products). Rows hold what clients sent, opened:
 * what an erased person sent is not there (the products projection skips it, and an erasure
 * rebuilds the account's read models).
 */

type ProductRow = Record<string, unknown> & { product_id: string; created_position: string | number };

/** What a product shows in full also in a list. */
interface ProductFields {
  productId: string;
  /** The userId sent with the latest submission; null when it had none. */
  sentByUserId: string | null;
  /** When the first submission was received. */
  createdAt: string;
  /** When the latest submission was received. */
  updatedAt: string;
  /** Submissions applied. */
  version: number;
}

export interface Product extends ProductFields {
  properties: Record<string, unknown>;
}

/** A product as a list shows it: its properties null when too large for a list, `truncated` saying so. */
export interface ListedProduct extends ProductFields {
  properties: Record<string, unknown> | null;
  truncated?: Truncations;
}

export interface ProductPage {
  products: ListedProduct[];
  /** The `cursor` of the next page; null at the end. */
  nextCursor: string | null;
}

/** Where a page of the products list starts: after this product of the list's order. */
export interface ProductsCursor {
  createdPosition: number;
  productId: string;
}

const fieldsOf = (row: ProductRow): ProductFields => ({
  productId: row.product_id,
  sentByUserId: row.sent_by_user_id as string | null,
  createdAt: row.created_at as string,
  updatedAt: row.changed_at as string,
  version: row.version as number,
});

function toListedProduct(row: ProductRow): ListedProduct {
  const truncations: Truncations = {};
  const properties = payloadOf<Record<string, unknown>>(row, 'properties', 'properties', truncations);
  return { ...fieldsOf(row), properties, ...truncatedField(truncations) };
}

const encodeProductsCursor = (row: ProductRow): string => encodeCursorOf('products', [Number(row.created_position), row.product_id]);

/** The position a products cursor points after; null when it is not one of ours. */
export function decodeProductsCursor(cursor: string): ProductsCursor | null {
  const parts = decodeCursorOf('products', cursor, ['integer', 'string']);
  return parts ? { createdPosition: parts[0] as number, productId: parts[1] as string } : null;
}

/**
 * Products of the list a search walks in a request at most (by the index alone): a page it leaves
 * short comes with the cursor of the last product walked, so that a rare term never reads the
 * account's every product at once.
 */
export const searchBudget = 50_000;

export interface ProductListOptions {
  /** Finds productIds holding it, whatever the case. */
  q?: string;
  limit: number;
  cursor?: ProductsCursor;
  /** Products a search walks at most (searchBudget). */
  walkBudget?: number;
}

/** `q` as a substring pattern with LIKE's wildcards taken literally. */
const containsPattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The first rows of `rows` that fit a reply (countFitting), and the cursor after them when any are left. */
function productPageOf(rows: ProductRow[], limit: number, moreAfter: ProductRow | undefined): ProductPage {
  const listed = rows.slice(0, limit).map(toListedProduct);
  const fitting = countFitting(listed);
  // Rows left unshown go on after the last shown; else the walk's end, when it stopped short of the list's.
  const after = fitting < rows.length ? rows[fitting - 1] : moreAfter;
  return { products: listed.slice(0, fitting), nextCursor: after ? encodeProductsCursor(after) : null };
}

/** A page of the account's products, newest first (queries-sql.ts), at most `limit` and what fits a reply in bytes. */
export async function findProducts(pool: Pool, accountId: string, options: ProductListOptions): Promise<ProductPage> {
  const c = options.cursor;
  const values = [accountId, options.limit + 1, c?.createdPosition ?? null, c?.productId ?? null];
  const term = options.q?.trim() ?? '';
  if (term === '') {
    const { rows } = await pool.query<ProductRow>(listProducts, values);
    return productPageOf(rows, options.limit, undefined);
  }
  const budget = options.walkBudget ?? searchBudget;
  type WalkedRow = ProductRow & { matches: boolean; scanned: string };
  const { rows } = await pool.query<WalkedRow>(searchProducts, [...values, containsPattern(term), budget]);
  const matches = rows.filter((row) => row.matches);
  const end = rows.find((row) => Number(row.scanned) === budget);
  // A page not full whose walk reached its budget: the list goes on after the last product walked.
  return productPageOf(matches, options.limit, matches.length <= options.limit ? end : undefined);
}

export async function findProduct(pool: Pool, accountId: string, productId: string): Promise<Product | null> {
  const { rows } = await pool.query<ProductRow>(oneProduct, [accountId, productId]);
  const row = rows[0];
  return row ? { ...fieldsOf(row), properties: row.properties as Record<string, unknown> } : null;
}

/** Whether the account knows the product: submitted, or named by a product event. */
export async function productIsKnown(pool: Pool, accountId: string, productId: string): Promise<boolean> {
  const { rows } = await pool.query<{ known: boolean }>(productKnown, [accountId, productId]);
  return rows[0]?.known === true;
}

export interface ProductEvent {
  eventId: string;
  /** The userId sent with it; null when none was. */
  userId: string | null;
  eventName: string;
  /** As sent (zone-less forms are read as UTC): show eventTimeUtc, the instant. */
  eventTime: string | null;
  eventTimeUtc: string;
  /** Null when larger than a list shows: `truncated.eventData` says so. */
  eventData: Record<string, unknown> | null;
  receivedAt: string;
  trackID: string | null;
  truncated?: Truncations;
}

export interface ProductEventPage {
  events: ProductEvent[];
  /** The `cursor` of the next page; null at the end. */
  nextCursor: string | null;
}

/** Where a page of a product's events starts: after this event time and global position. */
export interface ProductEventsCursor {
  eventTimeUtc: string;
  globalPosition: number;
}

/** The position a product events cursor points after; null when it is not one of ours. */
export function decodeProductEventsCursor(cursor: string): ProductEventsCursor | null {
  const parts = decodeCursorOf('product-events', cursor, ['string', 'integer']);
  if (!parts || Number.isNaN(Date.parse(parts[0] as string))) return null;
  return { eventTimeUtc: parts[0] as string, globalPosition: parts[1] as number };
}

/** A page of a product's events, latest first: at most `limit` and what fits a reply in bytes. */
export async function findProductEvents(pool: Pool, accountId: string, productId: string, limit: number, cursor?: ProductEventsCursor): Promise<ProductEventPage> {
  const { rows } = await pool.query<Record<string, unknown>>(productEvents, [accountId, productId, limit + 1, cursor?.eventTimeUtc ?? null, cursor?.globalPosition ?? null]);
  const events = rows.slice(0, limit).map((row): ProductEvent => {
    const truncations: Truncations = {};
    return {
      eventId: row.event_id as string,
      userId: row.user_id as string | null,
      eventName: row.event_name as string,
      eventTime: row.event_time as string | null,
      eventTimeUtc: row.event_time_utc as string,
      eventData: payloadOf<Record<string, unknown>>(row, 'event_data', 'eventData', truncations),
      receivedAt: row.received_at as string,
      trackID: row.track_id as string | null,
      ...truncatedField(truncations),
    };
  });
  const fitting = countFitting(events);
  const last = rows[fitting - 1];
  const more = fitting < rows.length && last !== undefined;
  return {
    events: events.slice(0, fitting),
    nextCursor: more ? encodeCursorOf('product-events', [last.event_time_utc as string, Number(last.global_position)]) : null,
  };
}
