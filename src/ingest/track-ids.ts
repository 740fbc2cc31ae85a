import { randomFillSync } from 'node:crypto';
import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';

/** Gives the trackID of element `index` of a request. */
export type TrackIds = (index: number) => string;

/**
 * Random bytes for UUIDv7s, filled 4 kB at a time: one call into the system's generator for 256
 * ids instead of one per id, which showed in the profile of bulk ingest (docs/performance.md).
 */
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

function randomSixteen(): Uint8Array {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

/**
 * Milliseconds and sequence of the last id, as uuid's own v7 keeps them: ids of one process are
 * strictly increasing (a new millisecond starts a random 31-bit sequence, the same millisecond
 * counts it up, and an overflow moves on to the next millisecond), and so unique.
 */
const state = { msecs: -Infinity, seq: 0 };

export function uuidV7(now = Date.now()): string {
  const random = randomSixteen();
  if (now > state.msecs) {
    state.seq = (((random[6] ?? 0) & 0x7f) << 24) | ((random[7] ?? 0) << 16) | ((random[8] ?? 0) << 8) | (random[9] ?? 0);
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs += 1;
  }
  return uuidv7({ random, msecs: state.msecs, seq: state.seq });
}

export const freshTrackIds: TrackIds = () => uuidV7();

/** The id of a second event made by one request (the merge after an upsert), derived from its trackID. */
export function derivedEventId(trackId: string, purpose: string): string {
  return uuidv5(purpose, trackId);
}
