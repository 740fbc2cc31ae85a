import { queryKeepingConnection, quickPing, type Pool } from '../db/pool.js';
import { isUnavailableError } from '../db/errors.js';
import { inTransaction } from '../db/transaction.js';
import { fromStored } from './events.js';
import { GroupCommitter } from './group-commit.js';
import { accountsOf, defaultPageBytes, type OnBatch, type AccountsScan, type AppendedEvent, type BacklogQuery, type Backlog, type EventStore, type NewEvent, type ReadAllResult, type ReadFilter, type RecordedEvent, asStoreUnavailable } from './port.js';
import * as sql from './postgres-sql.js';
import { StreamHeads } from './stream-heads.js';

export interface PostgresEventStoreOptions {
  maxBatchEvents?: number;
  /** Bytes of event data (JSON) one append transaction carries at most, besides its first unit. */
  maxBatchBytes?: number;
  maxConcurrentFlushes?: number;
  /** How many streams' heads this process remembers from its own appends (0: none, every head is looked up). */
  streamHeadsKept?: number;
  /** Called with the number of events of each committed batch, and their accounts. */
  onBatch?: OnBatch;
}

interface AppendRow {
  out_event_id: string;
  out_stream_name: string;
  out_stream_position: number;
  out_global_position: number;
  out_duplicate: boolean;
}

interface EventRow {
  global_position: number;
  stream_name: string;
  stream_position: number;
  event_id: string;
  event_type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  recorded_at: Date;
  transaction_id: string;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    ...fromStored({ type: row.event_type, data: row.data, metadata: row.metadata }),
    id: row.event_id,
    stream: row.stream_name,
    streamPosition: row.stream_position,
    globalPosition: row.global_position,
    recordedAt: row.recorded_at.toISOString(),
  };
}

function encodeCheckpoint(transactionId: string, globalPosition: number): string {
  return `${transactionId}:${globalPosition}`;
}

function decodeCheckpoint(checkpoint: string | null): [string, number] {
  if (checkpoint === null) return ['0', 0];
  const match = /^(\d+):(\d+)$/.exec(checkpoint);
  if (!match) throw new Error(`not a Postgres event store checkpoint: ${checkpoint}`);
  return [match[1] as string, Number(match[2])];
}

const errorCode = (error: unknown): unknown => (error as { code?: unknown }).code;

/**
 * A statement PostgreSQL refuses as wrong, which no retry can fix: a data exception (22), an
 * integrity violation (23), a syntax error or access rule (42: a schema that does not match the
 * service). Every other failure is the store's: it did not take the statement now.
 */
const isStatementFault = (error: unknown): boolean => {
  const code = errorCode(error);
  return typeof code === 'string' && /^(22|23|42)[0-9A-Z]{3}$/.test(code);
};

/** Retryable write conflicts: deadlock, serialization failure. */
const isRetryable = (error: unknown): boolean => errorCode(error) === '40P01' || errorCode(error) === '40001';

/** An event id already stored (or twice in the batch): the deduplicating append handles it. */
const isDuplicateId = (error: unknown): boolean =>
  errorCode(error) === '23505' && (error as { constraint?: unknown }).constraint === 'events_event_id_key';

/** A stream position already stored: a remembered head was behind another writer's append. */
const isStaleHead = (error: unknown): boolean =>
  errorCode(error) === '23505' && (error as { constraint?: unknown }).constraint === 'events_stream_name_stream_position_key';

/** The events of one append, with the JSON of their data (measured, and sent as it is). */
interface AppendUnit {
  events: NewEvent[];
  datas: string[];
  bytes: number;
  streams: string[];
}

/** A group-commit batch of many large events would hold them all in one transaction and one string. */
const defaultMaxBatchBytes = 8 * 1024 * 1024;

/**
 * How long remembered heads go unused after another writer passed one. Another API process on the
 * same database writing the same streams passes them all the time, and each collision writes its
 * batch twice: two processes sharing 1,000 users collided on nearly every batch. A lookup costs
 * far less than a batch written again (docs/performance.md, Several API processes writing the same people).
 */
const headsDistrustMs = 10_000;

/** About 10 MB of stream names: the streams a busy ingest writes again within minutes. */
const defaultStreamHeadsKept = 65_536;

export class PostgresEventStore implements EventStore {
  private readonly committer: GroupCommitter<AppendUnit, AppendedEvent[]>;
  private readonly heads: StreamHeads | null;
  /** Until when remembered heads go unused: another writer passed one (see headsDistrustMs). */
  private headsDistrustedUntil = 0;

  constructor(
    private readonly pool: Pool,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    const kept = options.streamHeadsKept ?? defaultStreamHeadsKept;
    this.heads = kept > 0 ? new StreamHeads(kept) : null;
    this.committer = new GroupCommitter({
      flush: (units) => this.flushUnits(units),
      sizeOf: (unit) => unit.events.length,
      maxBatchSize: options.maxBatchEvents ?? 1000,
      bytesOf: (unit) => unit.bytes,
      maxBatchBytes: options.maxBatchBytes ?? defaultMaxBatchBytes,
      maxConcurrentFlushes: options.maxConcurrentFlushes ?? 2,
      // Two flushes never append to one stream at once: neither waits on the other's stream lock,
      // and a remembered head is never passed by this process's own append in flight.
      keysOf: (unit) => unit.streams,
    });
  }

  append(events: NewEvent[]): Promise<AppendedEvent[]> {
    if (events.length === 0) return Promise.resolve([]);
    const datas = events.map((e) => JSON.stringify(e.data));
    const streams = [...new Set(events.map((e) => e.stream))];
    return this.committer.submit({ events, datas, bytes: datas.reduce((sum, json) => sum + json.length, 0), streams });
  }

  /** One transaction for the whole batch; if it fails for a reason of its own, each unit alone. */
  private async flushUnits(units: AppendUnit[]): Promise<PromiseSettledResult<AppendedEvent[]>[]> {
    try {
      const results = await this.writeWithRetry(units);
      return results.map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (units.length === 1 || isUnavailableError(error)) throw this.translate(error);
      // One after the other, so that units of one stream keep the order they were sent in.
      const settled: PromiseSettledResult<AppendedEvent[]>[] = [];
      for (const unit of units) {
        try {
          const [result] = await this.writeWithRetry([unit]);
          settled.push({ status: 'fulfilled', value: result as AppendedEvent[] });
        } catch (unitError) {
          settled.push({ status: 'rejected', reason: this.translate(unitError) });
        }
      }
      return settled;
    }
  }

  /**
   * Fresh ids (the usual case) are appended without looking for stored copies; a duplicate id shows
   * as a unique violation, and the batch is then appended again, skipping stored ids. Remembered
   * stream heads (StreamHeads) skip their lookups; one that another writer has passed shows as a
   * collision of stream positions, and the batch is then appended again with every head looked up.
   */
  private async writeWithRetry(units: AppendUnit[]): Promise<AppendedEvent[][]> {
    let dedupe = false;
    let useHeads = this.heads !== null && performance.now() >= this.headsDistrustedUntil;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.write(units, dedupe, useHeads);
      } catch (error) {
        if (isStaleHead(error) && useHeads) {
          // Once only: the batch is appended again with every head looked up (under the locks).
          this.heads?.forget(units.flatMap((unit) => unit.events.map((event) => event.stream)));
          this.headsDistrustedUntil = performance.now() + headsDistrustMs;
          useHeads = false;
          continue;
        }
        // A duplicate id can also come from a writer that committed it after the deduplicating
        // append looked (on another stream): looking again then finds it.
        if (attempt >= 3 || !(isDuplicateId(error) || isRetryable(error))) throw error;
        if (isDuplicateId(error)) dedupe = true;
      }
    }
  }

  private async write(units: AppendUnit[], dedupe: boolean, useHeads: boolean): Promise<AppendedEvent[][]> {
    const events = units.flatMap((unit) => unit.events);
    const heads = this.heads;
    const knownHeads = heads && useHeads && !dedupe ? events.map((event) => heads.get(event.stream)) : undefined;
    const { rows } = await queryKeepingConnection<AppendRow>(this.pool, sql.appendEvents(events, dedupe, units.flatMap((unit) => unit.datas), knownHeads));
    this.options.onBatch?.(events.length, accountsOf(events));
    if (heads) {
      for (const row of rows) if (!row.out_duplicate) heads.record(row.out_stream_name, row.out_stream_position);
    }
    const byId = new Map(rows.map((row) => [row.out_event_id, row]));
    const seen = new Set<string>();
    return units.map((unit) =>
      unit.events.map((event) => {
        const row = byId.get(event.id);
        if (!row) throw new Error(`event ${event.id} missing from the append result`);
        const repeated = seen.has(event.id);
        seen.add(event.id);
        return {
          id: event.id,
          stream: row.out_stream_name,
          streamPosition: row.out_stream_position,
          globalPosition: row.out_global_position,
          duplicate: row.out_duplicate || repeated,
        };
      }),
    );
  }

  /**
   * A failed append is answered 503 (a retry stores nothing twice), unless PostgreSQL refused the
   * statement itself: then the service is at fault, and it is answered 500 and logged.
   */
  private translate(error: unknown): unknown {
    return isStatementFault(error) ? error : asStoreUnavailable(error);
  }

  async readAll(checkpoint: string | null, limit: number, filter: ReadFilter = {}): Promise<ReadAllResult> {
    const [transactionId, globalPosition] = decodeCheckpoint(checkpoint);
    const values: unknown[] = [transactionId, globalPosition, limit, filter.types ?? null, filter.data !== false, filter.maxBytes ?? defaultPageBytes];
    const text = filter.accountId === undefined ? sql.readAllAfter : sql.readAccountAfter;
    if (filter.accountId !== undefined) values.push(filter.accountId);
    const { rows } = await inTransaction(this.pool, (client) => client.query<EventRow & { wanted: boolean; bytes: number; page_rows: string }>(text, values), { begin: sql.inIndexOrder });
    const last = rows.at(-1);
    return {
      events: rows
        .filter((row) => row.wanted)
        .map((row) => ({ ...toRecorded(row.data === null ? { ...row, data: {} } : row), position: encodeCheckpoint(row.transaction_id, row.global_position) })),
      checkpoint: last ? encodeCheckpoint(last.transaction_id, last.global_position) : checkpoint,
      bytes: rows.reduce((sum, row) => sum + row.bytes, 0),
      // Every row readable now was read: neither the limit nor the bound in bytes cut the page.
      atEnd: !last || (Number(last.page_rows) < limit && Number(last.page_rows) === rows.length),
    };
  }

  async backlog(checkpoint: string | null, filter: ReadFilter = {}): Promise<Backlog> {
    const [transactionId, globalPosition] = decodeCheckpoint(checkpoint);
    const { rows } = await this.pool
      .query<{ events: number; oldest: Date | null }>(sql.backlogAfter, [transactionId, globalPosition, filter.types ?? null, filter.accountId ?? null])
      .catch(this.fail);
    const row = rows[0];
    return { events: row?.events ?? 0, oldestRecordedAt: row?.oldest ? row.oldest.toISOString() : null };
  }

  /** One indexed count per reader (an account's events are found through events_by_account). */
  backlogs(readers: readonly BacklogQuery[]): Promise<Backlog[]> {
    return Promise.all(readers.map((reader) => this.backlog(reader.checkpoint, reader.filter)));
  }

  async scanAccounts(checkpoint: string | null, limit: number, options: { withUnsettled?: boolean } = {}): Promise<AccountsScan> {
    const [transactionId, globalPosition] = decodeCheckpoint(checkpoint);
    const { rows } = await this.pool
      .query<{ account_id: string | null; transaction_id: string; global_position: number }>(sql.accountsAfter, [
        transactionId,
        globalPosition,
        limit,
        options.withUnsettled === true,
      ])
      .catch(this.fail);
    const accounts = new Map<string, { accountId: string; before: string | null; last: string }>();
    let before = checkpoint;
    for (const row of rows) {
      const position = encodeCheckpoint(row.transaction_id, row.global_position);
      if (row.account_id !== null) {
        const met = accounts.get(row.account_id);
        if (met) met.last = position;
        else accounts.set(row.account_id, { accountId: row.account_id, before, last: position });
      }
      before = position;
    }
    return { accounts: [...accounts.values()], checkpoint: before, atEnd: rows.length < limit };
  }

  comparePositions(a: string | null, b: string | null): number {
    const [ta, pa] = decodeCheckpoint(a);
    const [tb, pb] = decodeCheckpoint(b);
    const byTransaction = BigInt(ta) - BigInt(tb);
    return byTransaction !== 0n ? (byTransaction < 0n ? -1 : 1) : Math.sign(pa - pb);
  }

  async readStream(stream: string, fromPosition = 0, limit = 10_000): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(sql.readStream, [stream, fromPosition, limit]).catch(this.fail);
    return rows.map(toRecorded);
  }

  async ping(): Promise<void> {
    await quickPing(this.pool).catch(this.fail);
  }

  /** A failed read that a reply waits for (the audit, the lag, health), translated as an append's failure. */
  private readonly fail = (error: unknown): never => {
    throw this.translate(error);
  };

  async close(): Promise<void> {
    await this.committer.drain();
  }
}
