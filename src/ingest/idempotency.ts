import { createHash } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import type { Pool } from '../db/pool.js';
import { IdempotencyConflictError, IdempotencyKeyInvalidError } from './errors.js';
import * as sql from './idempotency-sql.js';
import type { TrackIds } from './track-ids.js';

/** Namespace of the trackIDs derived from an Idempotency-Key. */
const namespace = '6f1c2b0e-4a57-4d4e-9a7e-2f3b8c9d1e05';

export const idempotencyWindowHours = 24;
/** The window of a browser key's batches: longer than the 7 days the browser SDK keeps a batch (docs/browser.md). */
export const browserIdempotencyWindowHours = 8 * 24;
const maxKeyLength = 255;

/** A request's Idempotency-Key: its trackIDs, and the reply to replay if it was answered before. */
export interface IdempotentRequest {
  trackIds: TrackIds;
  /** The reply recorded for the first request of the window, if it was answered 200. */
  recordedReply: unknown;
  record(reply: unknown): Promise<void>;
  /** Frees the key of a request that stored nothing (its item was invalid), for a corrected retry. */
  release(): Promise<void>;
}

/**
 * With an Idempotency-Key, trackIDs are name-based: the same account, endpoint, key and element
 * give the same id within the key's 24-hour window, and the event store's dedup on event id makes a
 * retry store nothing new. Once the first request was answered, a repeat gets that reply again
 * without running. The key is bound to the body of its first request: another body is refused
 * (422), so two different requests can never share trackIDs.
 */
export class IdempotencyKeys {
  constructor(private readonly pool: Pool) {}

  async open(accountId: string, endpoint: string, key: string, body: unknown, windowHours = idempotencyWindowHours): Promise<IdempotentRequest> {
    if (key.length === 0 || key.length > maxKeyLength) {
      throw new IdempotencyKeyInvalidError(`Idempotency-Key must be 1 to ${maxKeyLength} characters`);
    }
    const bodyHash = createHash('sha256').update(JSON.stringify(body)).digest();
    const { rows } = await this.pool.query<{ window_start: Date; window_hours: number; body_hash: Buffer; reply: unknown }>(sql.openWindow, [
      accountId,
      endpoint,
      key,
      windowHours,
      bodyHash,
    ]);
    const row = rows[0] as { window_start: Date; window_hours: number; body_hash: Buffer; reply: unknown };
    if (!row.body_hash.equals(bodyHash)) {
      // The key's own window: that of its first request, which may have come with a browser key.
      throw new IdempotencyConflictError(`this Idempotency-Key was used with another body in the last ${row.window_hours} hours`);
    }
    const windowStart = row.window_start;
    const seed = `${accountId}\n${endpoint}\n${key}\n${windowStart.getTime()}`;
    return {
      trackIds: (index) => uuidv5(`${seed}\n${index}`, namespace),
      recordedReply: row.reply,
      record: async (reply) => {
        await this.pool.query(sql.recordReply, [accountId, endpoint, key, windowStart, JSON.stringify(reply)]);
      },
      release: async () => {
        await this.pool.query(sql.release, [accountId, endpoint, key, windowStart, bodyHash]);
      },
    };
  }

  /** Deletes keys whose window is over (their rows only matter within it). */
  async forgetExpired(): Promise<number> {
    const { rowCount } = await this.pool.query(sql.forgetExpired, [Math.min(idempotencyWindowHours, browserIdempotencyWindowHours)]);
    return rowCount ?? 0;
  }
}
