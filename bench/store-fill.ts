import type pg from 'pg';
import { schemaVersion, type EventDataOf, type EventMetadata, type EventType } from '../src/eventstore/events.js';
import { jsonbOf, sqlValue, type JsonbTemplate } from './jsonb-template.js';

/**
 * Fills the event store with a realistic mix of events straight in SQL (generate_series), far faster
 * than ingesting them: ~1M events in well under a minute. Rows are what the ingest side stores
 * (docs/events.md): metadata, UUIDv7-like ids in time order, stream positions gap-free per stream
 * and continuing any stream already stored, and payloads written from templates typed by the event
 * contract (src/eventstore/events.ts), so that a change of a shape breaks the bench's build.
 *
 * Row r (0-based, over the whole store) is decided by r alone, so a store can be filled in several
 * calls (250k, then up to 1M) and holds the same events as one filled in one go. In every 20 rows:
 *  - 0-3: UserUpserted of a known user (userId), full profile and custom attributes;
 *  - 4: UserUpserted of a new anonymous visitor (anonymousId `anon-<r/20>`);
 *  - 5: UserUpserted of a known user, or in one cycle of 4 (after the first 8) an identification:
 *    the user sent with both ids, and 6 the ProfilesMerged of an anonymous visitor seen 8 cycles
 *    (160 rows) earlier into it, on the user's stream right after, as the ingest side stores it;
 *  - 6: otherwise a UserUpserted of a known user;
 *  - 7-14: EventTracked (7: of an anonymous visitor, else of a known user);
 *  - 15-16: ProductSubmitted; 17-19: ProductEventTracked.
 * That is 35% user events (about 1.25% of them ProfilesMerged), 40% EventTracked, 10%
 * ProductSubmitted, 15% ProductEventTracked; over `accounts` accounts, 15,000 known users and 1,250
 * products per account, and one anonymous visitor per 20 rows (1M rows: ~110,000 profiles).
 */

export const fillMix = {
  rowsPerCycle: 20,
  knownUsersPerAccount: 15_000,
  productsPerAccount: 1_250,
};

// The events of each kind of row, typed by the contract: SQL varies only the values given as sqlValue.
// Columns of the fill query they use: r (row number), user_id, anonymous_id, product_id.
const userId = sqlValue<string>('user_id');
const anonymousId = sqlValue<string>('anonymous_id');
const productId = sqlValue<string>('product_id');
const city = sqlValue<string>("(ARRAY['Berlin', 'Lisbon', 'Austin', 'Osaka', 'Lagos'])[1 + r % 5]");
const eventTimes = { eventTime: '2024-05-01T12:30:00.123+02:00', eventTimeUtc: '2024-05-01T10:30:00.123Z' };

const knownUser = {
  profile: {
    firstName: 'Ann',
    lastName: sqlValue<string>("'Tester ' || r % 1000"),
    email: sqlValue<string>("user_id || '@example.com'"),
    city,
    country: 'DE',
    opt_in_email: sqlValue<boolean>('r % 2 = 0'),
    points: sqlValue<number>('r % 500'),
    last_active: '2024-05-01T12:30:00.123+02:00',
  },
  attributes: {
    membership_level: sqlValue<string>("(ARRAY['free', 'pro', 'team', 'enterprise'])[1 + r % 4]"),
    lifetime_value: sqlValue<number>('(r % 997) * 1.25'),
    newsletter: sqlValue<boolean>('r % 3 = 0'),
    signup_source: 'web',
    last_login: '2024-04-30T08:15:00Z',
  },
  attributeTypes: { membership_level: 'string', lifetime_value: 'number', newsletter: 'boolean', signup_source: 'string', last_login: 'datetime' },
  instants: { last_active: '2024-05-01T10:30:00.123Z', 'attributes.last_login': '2024-04-30T08:15:00.000Z' },
  userId,
} satisfies JsonbTemplate<EventDataOf['UserUpserted']>;

const trackedEvent = {
  eventName: sqlValue<string>("(ARRAY['page_view', 'add_to_cart', 'checkout_started'])[1 + r % 3]"),
  ...eventTimes,
  eventData: { page: sqlValue<string>("'/products/' || r % 300"), referrer: 'google', value: 19.99, items: sqlValue<number>('1 + r % 4') },
};

const kindOf = <T extends EventType>(type: T, data: JsonbTemplate<EventDataOf[NoInfer<T>]>) => ({ type, data: jsonbOf(data) });

/** Each kind of row of the mix: the event type it stores and its data. */
const kinds = {
  UserUpserted: kindOf('UserUpserted', knownUser),
  // A known user sent with the anonymous id it identifies.
  identify: kindOf('UserUpserted', { ...knownUser, anonymousId }),
  anonymous: kindOf('UserUpserted', {
    anonymousId,
    profile: { city, device_type: 'mobile', utm_source: 'google' },
    attributes: { landing_page: sqlValue<string>("'/products/' || r % 300"), plan: 'free' },
    attributeTypes: { landing_page: 'string', plan: 'string' },
    instants: {},
  }),
  ProfilesMerged: kindOf('ProfilesMerged', { userId, anonymousId }),
  EventTracked: kindOf('EventTracked', { userId, ...trackedEvent }),
  anonymousEvent: kindOf('EventTracked', { anonymousId, ...trackedEvent }),
  ProductSubmitted: kindOf('ProductSubmitted', {
    productId,
    userId,
    properties: { name: sqlValue<string>("'Shoe ' || product_id"), price: 49.9, currency: 'EUR', category: 'shoes', stock: sqlValue<number>('r % 40') },
  }),
  ProductEventTracked: kindOf('ProductEventTracked', {
    productId,
    userId,
    eventName: sqlValue<string>("(ARRAY['product_viewed', 'product_added', 'product_purchased'])[1 + r % 3]"),
    ...eventTimes,
    eventData: { price: 49.9, currency: 'EUR', quantity: sqlValue<number>('1 + r % 3'), category: 'shoes' },
  }),
};

const metadata: JsonbTemplate<EventMetadata> = {
  // The merge of an identification carries the trackId of the upsert stored right before it.
  trackId: sqlValue<string>("CASE WHEN kind = 'ProfilesMerged' THEN previous_v7 ELSE v7 END"),
  accountId: sqlValue<string>('acc'),
  receivedAt: sqlValue<string>('received_at'),
  schemaVersion,
};

/** `WHEN '<kind>' THEN <sql>` for every kind of row. */
const whenKind = (sql: (kind: (typeof kinds)[keyof typeof kinds]) => string): string =>
  Object.entries(kinds)
    .map(([name, kind]) => `WHEN '${name}' THEN ${sql(kind)}`)
    .join(' ');

// One statement per chunk: its own transaction, like a (large) group commit.
const fillChunk = `
WITH base AS (
  SELECT r, r / 20 AS c, r % 20 AS b, (r * 2654435761) % 4294967296 AS h
  FROM generate_series($1::bigint, $2::bigint - 1) AS r
),
kinds AS (
  SELECT r, c, b, h,
    CASE
      WHEN b = 5 AND c % 4 = 0 AND c >= 8 THEN 'identify'
      WHEN b = 6 AND c % 4 = 0 AND c >= 8 THEN 'ProfilesMerged'
      WHEN b = 4 THEN 'anonymous'
      WHEN b <= 6 THEN 'UserUpserted'
      WHEN b = 7 THEN 'anonymousEvent'
      WHEN b <= 14 THEN 'EventTracked'
      WHEN b <= 16 THEN 'ProductSubmitted'
      ELSE 'ProductEventTracked'
    END AS kind
  FROM base
),
ids AS (
  SELECT k.*,
    CASE
      WHEN kind IN ('identify', 'ProfilesMerged') THEN (c - 8) % $4
      WHEN kind = 'anonymous' THEN c % $4
      WHEN kind = 'anonymousEvent' THEN greatest(c - h % 50, 0) % $4
      ELSE h % $4
    END AS a,
    CASE
      -- Both rows of an identification name the same user.
      WHEN kind IN ('identify', 'ProfilesMerged') THEN 'u-' || ((c * 2654435761) % 4294967296) % $5
      ELSE 'u-' || (h / $4) % $5
    END AS user_id,
    CASE
      WHEN kind IN ('identify', 'ProfilesMerged') THEN 'anon-' || (c - 8)
      WHEN kind = 'anonymous' THEN 'anon-' || c
      WHEN kind = 'anonymousEvent' THEN 'anon-' || greatest(c - h % 50, 0)
    END AS anonymous_id,
    'sku-' || (h / $4) % $6 AS product_id,
    -- UUIDv7 layout: 48-bit millisecond time, version 7, variant 8, then the row number.
    (lpad(to_hex($7::bigint + r), 12, '0') || '7' || lpad(to_hex(r % 4096), 3, '0') || '8' || lpad(to_hex(r), 15, '0'))::uuid AS v7,
    (lpad(to_hex($7::bigint + r - 1), 12, '0') || '7' || lpad(to_hex((r - 1) % 4096), 3, '0') || '8' || lpad(to_hex(r - 1), 15, '0'))::uuid AS previous_v7,
    to_char(to_timestamp(($7::bigint + r) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS received_at
  FROM kinds k
),
built AS (
  SELECT i.r,
    CASE kind
      WHEN 'anonymous' THEN 'anonymous-' || acc || '-' || anonymous_id
      WHEN 'anonymousEvent' THEN 'anonymous-' || acc || '-' || anonymous_id
      WHEN 'ProductSubmitted' THEN 'product-' || acc || '-' || product_id
      WHEN 'ProductEventTracked' THEN 'product-' || acc || '-' || product_id
      ELSE 'user-' || acc || '-' || user_id
    END AS stream,
    CASE
      -- v5-like: the ingest side derives it from the request's trackID and the anonymous id.
      WHEN kind = 'ProfilesMerged' THEN md5('merge' || r)::uuid
      ELSE v7
    END AS event_id,
    CASE kind ${whenKind((kind) => `'${kind.type}'`)} END AS event_type,
    CASE kind ${whenKind((kind) => kind.data)} END AS data,
    ${jsonbOf(metadata)} AS metadata
  FROM ids i CROSS JOIN LATERAL (SELECT ($3::uuid[])[(i.a + 1)::int] AS acc) AS x
  -- Parts fill their share of the accounts side by side: their streams never meet.
  WHERE i.a % $8 = $9
),
numbered AS (
  SELECT b.*, row_number() OVER (PARTITION BY b.stream ORDER BY b.r) - 1 AS k FROM built b
),
heads AS (
  SELECT s.stream, (SELECT max(e.stream_position) FROM events e WHERE e.stream_name = s.stream) AS head
  FROM (SELECT DISTINCT n.stream FROM numbered n) AS s
)
INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
SELECT n.stream, COALESCE(h.head, -1) + 1 + n.k, n.event_id, n.event_type, n.data, n.metadata
FROM numbered n JOIN heads h ON h.stream = n.stream
ORDER BY n.r`;

export interface FillOptions {
  /** Account ids (uuid) the events belong to. */
  accounts: string[];
  /** Millisecond time of row 0 (receivedAt and the ids' time part); row r is r ms later. */
  startMs: number;
  /** Rows per statement (and transaction) of each part; a multiple of 20. */
  chunkRows?: number;
  /** Connections filling at once, each the events of its share of the accounts (at most one per account). */
  parts?: number;
  onProgress?: (rowsInserted: number) => void;
}

/**
 * Appends rows [from, to) of the mix (from a multiple of 20, so that an identification and its
 * merge are stored together); returns the rows inserted. Global positions of the parts interleave,
 * as those of concurrent appends do; each stream is written by one part, in row order.
 */
export async function fillStore(pool: pg.Pool, from: number, to: number, options: FillOptions): Promise<number> {
  if (from % fillMix.rowsPerCycle !== 0) throw new Error(`fillStore: from (${from}) must be a multiple of ${fillMix.rowsPerCycle}`);
  const chunk = options.chunkRows ?? 40_000;
  const parts = Math.max(1, Math.min(options.parts ?? 2, options.accounts.length));
  let inserted = 0;
  const fillPart = async (part: number): Promise<void> => {
    for (let start = from; start < to; start += chunk) {
      const end = Math.min(to, start + chunk);
      const result = await pool.query(fillChunk, [
        start,
        end,
        options.accounts,
        options.accounts.length,
        fillMix.knownUsersPerAccount,
        fillMix.productsPerAccount,
        options.startMs,
        parts,
        part,
      ]);
      inserted += result.rowCount ?? 0;
      options.onProgress?.(inserted);
    }
  };
  await Promise.all(Array.from({ length: parts }, (_, part) => fillPart(part)));
  return inserted;
}

/** Events of each type in the store. */
export async function countByType(db: pg.ClientBase | pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ event_type: string; n: string }>('SELECT event_type, count(*)::text AS n FROM events GROUP BY 1');
  return new Map(rows.map((row) => [row.event_type, Number(row.n)]));
}
