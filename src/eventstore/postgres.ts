import type { Pool } from '../db/pool.js';
import { isUnavailableError } from '../db/errors.js';
import { storeUnavailable } from '../errors.js';
import { GroupCommitter } from './group-commit.js';
import type { AppendedEvent, EventStore, NewEvent, ReadAllResult, RecordedEvent, EventType, EventMetadata } from './port.js';
import * as sql from './postgres-sql.js';

export interface PostgresEventStoreOptions {
  maxBatchEvents?: number;
  maxConcurrentFlushes?: number;
  /** Called with the number of events of each committed batch. */
  onBatch?: (events: number) => void;
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
  metadata: EventMetadata;
  recorded_at: Date;
  transaction_id: string;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    stream: row.stream_name,
    streamPosition: row.stream_position,
    globalPosition: row.global_position,
    type: row.event_type as EventType,
    data: row.data,
    metadata: row.metadata,
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

/** Retryable write conflicts: deadlock, serialization failure, unique violation from a racing writer. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '40P01' || code === '40001' || code === '23505';
}

export class PostgresEventStore implements EventStore {
  private readonly committer: GroupCommitter<NewEvent[], AppendedEvent[]>;

  constructor(
    private readonly pool: Pool,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    this.committer = new GroupCommitter({
      flush: (units) => this.flushUnits(units),
      sizeOf: (unit) => unit.length,
      maxBatchSize: options.maxBatchEvents ?? 1000,
      maxConcurrentFlushes: options.maxConcurrentFlushes ?? 2,
    });
  }

  append(events: NewEvent[]): Promise<AppendedEvent[]> {
    if (events.length === 0) return Promise.resolve([]);
    return this.committer.submit(events);
  }

  /** One transaction for the whole batch; if it fails for a reason of its own, each unit alone. */
  private async flushUnits(units: NewEvent[][]): Promise<PromiseSettledResult<AppendedEvent[]>[]> {
    try {
      const results = await this.writeWithRetry(units);
      return results.map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (units.length === 1 || isUnavailableError(error)) throw this.translate(error);
      return Promise.allSettled(
        units.map(async (unit) => {
          try {
            const [result] = await this.writeWithRetry([unit]);
            return result as AppendedEvent[];
          } catch (unitError) {
            throw this.translate(unitError);
          }
        }),
      );
    }
  }

  private async writeWithRetry(units: NewEvent[][]): Promise<AppendedEvent[][]> {
    try {
      return await this.write(units);
    } catch (error) {
      if (!isRetryable(error)) throw error;
      return this.write(units);
    }
  }

  private async write(units: NewEvent[][]): Promise<AppendedEvent[][]> {
    const events = units.flat();
    const { rows } = await this.pool.query<AppendRow>(sql.appendEvents, [JSON.stringify(events)]);
    this.options.onBatch?.(events.length);
    const byId = new Map(rows.map((row) => [row.out_event_id, row]));
    const seen = new Set<string>();
    return units.map((unit) =>
      unit.map((event) => {
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

  private translate(error: unknown): unknown {
    return isUnavailableError(error) ? storeUnavailable() : error;
  }

  async readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const [transactionId, globalPosition] = decodeCheckpoint(checkpoint);
    const { rows } = await this.pool.query<EventRow>(sql.readAllAfter, [transactionId, globalPosition, limit]);
    const last = rows.at(-1);
    return {
      events: rows.map(toRecorded),
      checkpoint: last ? encodeCheckpoint(last.transaction_id, last.global_position) : checkpoint,
    };
  }

  async readStream(stream: string, fromPosition = 0, limit = 10_000): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(sql.readStream, [stream, fromPosition, limit]);
    return rows.map(toRecorded);
  }

  async ping(): Promise<void> {
    await this.pool.query(sql.ping);
  }

  async close(): Promise<void> {
    await this.committer.drain();
  }
}
