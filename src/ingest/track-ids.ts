import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import type { Pool } from '../db/pool.js';
import { badRequest } from '../errors.js';

/** Namespace of the service's name-based (v5) ids. */
const namespace = '6f1c2b0e-4a57-4d4e-9a7e-2f3b8c9d1e05';

export const idempotencyWindowHours = 24;
const maxKeyLength = 255;

/** Gives the trackID of element `index` of a request. */
export type TrackIds = (index: number) => string;

export const freshTrackIds: TrackIds = () => uuidv7();

/** The id of a second event made by one request (the merge after an upsert), derived from its trackID. */
export function derivedEventId(trackId: string, purpose: string): string {
  return uuidv5(purpose, trackId);
}

const openWindow = `INSERT INTO idempotency_keys AS k (account_id, endpoint, key, window_start)
  VALUES ($1, $2, $3, now())
  ON CONFLICT (account_id, endpoint, key) DO UPDATE
    SET window_start = CASE WHEN k.window_start < now() - make_interval(hours => $4) THEN now() ELSE k.window_start END
  RETURNING window_start`;

/**
 * With an Idempotency-Key, trackIDs are name-based: the same account, endpoint, key and element
 * give the same id within the key's 24-hour window, and the event store's dedup on event id makes a
 * retry store nothing new. After the window the key starts a new one, as a new request.
 */
export class IdempotencyKeys {
  constructor(private readonly pool: Pool) {}

  async trackIds(accountId: string, endpoint: string, key: string): Promise<TrackIds> {
    if (key.length === 0 || key.length > maxKeyLength) {
      throw badRequest(`Idempotency-Key must be 1 to ${maxKeyLength} characters`);
    }
    const { rows } = await this.pool.query<{ window_start: Date }>(openWindow, [accountId, endpoint, key, idempotencyWindowHours]);
    const windowStart = (rows[0] as { window_start: Date }).window_start.getTime();
    return (index) => uuidv5(`${accountId}\n${endpoint}\n${key}\n${windowStart}\n${index}`, namespace);
  }
}
