/** SQL of the Postgres event store adapter. */

import type { NewEvent } from './port.js';

/**
 * The append of a batch (see append_events in the migrations); `dedupe` skips ids already stored.
 * `datas`: the JSON of each event's data, when made already (to measure the batch). `knownHeads`:
 * for each event, its stream's head when known to the caller (null: looked up); not with `dedupe`.
 */
export function appendEvents(
  events: NewEvent[],
  dedupe: boolean,
  datas: string[] = events.map((e) => JSON.stringify(e.data)),
  knownHeads?: (number | null)[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [
    events.map((e) => e.id),
    events.map((e) => e.stream),
    events.map((e) => e.type),
    `[${datas.join(',')}]`,
    JSON.stringify(events.map((e) => e.metadata)),
  ];
  const call = dedupe
    ? 'append_events_dedupe($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb)'
    : knownHeads
      ? 'append_events($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb, $6::bigint[])'
      : 'append_events($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb)';
  if (!dedupe && knownHeads) values.push(knownHeads);
  const account = soleAccountOf(events);
  if (account === null) return { text: `SELECT * FROM ${call}`, values };
  values.push(account);
  return { text: `SELECT a.* FROM (SELECT ${declaresAccount(`$${values.length}`)}) AS declared CROSS JOIN LATERAL ${call} AS a`, values };
}

/** The account every event belongs to, or null when they belong to more than one (or name none). */
function soleAccountOf(events: readonly NewEvent[]): string | null {
  const first = events[0]?.metadata.accountId;
  if (typeof first !== 'string' || first === '') return null;
  return events.every((e) => e.metadata.accountId === first) ? first : null;
}

/**
 * The two-key advisory lock class of declared appends (stream locks are class 7301): an append
 * transaction whose events all belong to one account holds the shared lock (7302, hash of the
 * account) for its whole life, and appends to no other account. A catch-up read of another
 * account then need not wait for it (accountHorizon). One lock, taken whole: a transaction is
 * either declared for its one account or not declared at all, and a hash shared by two accounts
 * only makes a read wait.
 */
const appendingAccountClass = 7302;

const accountKey = (param: string): string => `(hashtext(${param})::bigint & 4294967295)::oid`;

function declaresAccount(param: string): string {
  return `pg_advisory_xact_lock_shared(${appendingAccountClass}, hashtext(${param}))`;
}

/**
 * A bigint advisory lock key class no other lock of the service takes in this form: a transaction
 * that will never append events (a projection batch, a rebuild) holds the shared lock keyed by its
 * own transaction id (neverAppends), so that catch-up reads need not wait for it.
 */
export const neverAppends = 'SELECT pg_advisory_xact_lock_shared(pg_current_xact_id()::text::bigint)';

/**
 * The catch-up horizon: the oldest transaction still running that may append events here, or the
 * next transaction id when none is. Rows of transactions below it are final: no event can commit
 * among them later. Running transactions that hold nothing back:
 * - those that declared they never append (neverAppends: their id is a bigint advisory lock they
 *   hold), so that a long projection batch, or one paused waiting on a lock, does not keep every
 *   account's new events from being read;
 * - those connected to another database. Transaction ids are the server's, so a snapshot lists the
 *   writers of every database on it; one holding a lock in another database (a writer holds one on
 *   what it wrote) can never append here. Otherwise one long transaction of another application
 *   on the same server stalls every read model.
 * The lock table is read once (each read of pg_locks takes every lock partition's lock).
 */
const catchUpHorizon = horizon('');

/**
 * The catch-up horizon of one account ($7): as catchUpHorizon, and appends declared for another
 * account (declaresAccount) do not hold it back either, so that the events of a quiet account are
 * read as soon as they commit however many appends of a busy one are in flight. A running
 * transaction is matched to its declaration through the lock it holds on its own id (mode
 * ExclusiveLock; a transaction waiting for it asks for a ShareLock) in the same virtual transaction.
 */
const accountHorizon = horizon(`
      AND xid(x) NOT IN (SELECT t.transactionid FROM locks t JOIN locks a ON a.virtualtransaction = t.virtualtransaction
        WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
          AND a.locktype = 'advisory' AND a.objsubid = 2 AND a.classid = ${appendingAccountClass} AND a.granted AND a.mode = 'ShareLock'
          AND a.database = (SELECT oid FROM here) AND a.objid <> ${accountKey('$7')})`);

function horizon(alsoPassing: string): string {
  return `(WITH locks AS MATERIALIZED (SELECT locktype, database, classid, objid, objsubid, mode, granted, virtualtransaction, transactionid FROM pg_locks),
      here AS MATERIALIZED (SELECT oid FROM pg_database WHERE datname = current_database())
    SELECT coalesce(min(x), pg_snapshot_xmax(pg_current_snapshot()))
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE x NOT IN (SELECT ((l.classid::bigint << 32) | l.objid::bigint)::text::xid8 FROM locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.mode = 'ShareLock' AND l.database = (SELECT oid FROM here))
      AND xid(x) NOT IN (SELECT t.transactionid FROM locks t JOIN locks o ON o.virtualtransaction = t.virtualtransaction
        WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
          AND o.database <> 0 AND o.database <> (SELECT oid FROM here))${alsoPassing})`;
}

const recordedColumns = `global_position, stream_name, stream_position, event_id, event_type, data, metadata,
  recorded_at, transaction_id::text AS transaction_id`;

/**
 * $4: the event types wanted, or NULL for all; the payload of other events is not sent. The text
 * alias of transaction_id must not be what ORDER BY names: text order puts '1000' before '999'.
 */
const filteredColumns = `global_position, stream_name, stream_position, event_id, event_type,
  ($4::text[] IS NULL OR event_type = ANY($4)) AS wanted,
  CASE WHEN ($4::text[] IS NULL OR event_type = ANY($4)) AND $5 THEN data END AS data,
  CASE WHEN $4::text[] IS NULL OR event_type = ANY($4) THEN metadata END AS metadata,
  recorded_at, transaction_id::text AS transaction_id`;

/** Bytes of data a row sends: none when its data is left out. */
const sentBytes = `CASE WHEN ($4::text[] IS NULL OR event_type = ANY($4)) AND $5 THEN data_bytes ELSE 0 END`;

/**
 * Catch-up read. Rows are ordered by writing transaction, then position, and only rows of
 * transactions older than every transaction still running that may append are returned
 * (catchUpHorizon): a transaction that commits late can therefore never be passed over by a cursor
 * that has moved on.
 *
 * At most $3 rows, and only as long as the data of the rows before stays under $6 bytes (the first
 * row always comes). The sizes are stored with each event (data_bytes), so rows left out cost no
 * detoasting; the window runs along the index scan and stops with the LIMIT. `page_rows`: the rows
 * of the page before the bound in bytes, fewer than $3 when the read reached the horizon. With `byAccount`,
 * only the rows of account $7, along the index events_by_account: the same order, restricted.
 */
function catchUpRead(byAccount: boolean): string {
  return `SELECT * FROM (SELECT page.*, count(*) OVER () AS page_rows FROM (
    SELECT ${filteredColumns}, ${sentBytes} AS bytes,
      coalesce(sum(${sentBytes}) OVER (ORDER BY events.transaction_id, events.global_position
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bytes_before
    FROM events
    WHERE ${byAccount ? 'account_id = $7 AND ' : ''}(transaction_id, global_position) > ($1::xid8, $2::bigint)
      AND transaction_id < ${byAccount ? accountHorizon : catchUpHorizon}
    ORDER BY events.transaction_id, events.global_position
    LIMIT $3) page) counted
  WHERE bytes_before < $6
  ORDER BY transaction_id::xid8, global_position`;
}

export const readAllAfter = catchUpRead(false);

/**
 * How a catch-up read is run: along its index, in order, whatever PostgreSQL estimates. Its row
 * estimate for a cursor and a horizon is often far too low (a table just filled, before ANALYZE),
 * and it then sorts every row past the cursor, data included, for each page: a backlog read in
 * pages cost the square of its size (docs/performance.md, Catch-up reads in index order).
 */
export const inIndexOrder = 'BEGIN READ ONLY; SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off';

export const readAccountAfter = catchUpRead(true);

/**
 * Events after a checkpoint, committed or about to be visible: what a reader there has still to
 * read ($4: of that account only, or NULL for all).
 */
export const backlogAfter = `SELECT count(*) AS events, min(recorded_at) AS oldest FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND ($3::text[] IS NULL OR event_type = ANY($3))
    AND ($4::text IS NULL OR account_id = $4)`;

/**
 * The account of each of up to $3 events after a checkpoint, in catch-up order (discovery). As
 * above, ORDER BY names the table's column, not the text alias.
 */
export const accountsAfter = `SELECT account_id, transaction_id::text AS transaction_id, global_position FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND ($4 OR transaction_id < ${catchUpHorizon})
  ORDER BY events.transaction_id, events.global_position
  LIMIT $3`;

export const readStream = `SELECT ${recordedColumns} FROM events
  WHERE stream_name = $1 AND stream_position >= $2
  ORDER BY stream_position
  LIMIT $3`;
