import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { decodeLiveCursor, liveEvents } from '../projections/track-index/live.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

const account = '00000000-0000-4000-8000-000000000001';

/**
 * The track index writes events in the order their transactions committed, which is not the order
 * of their global positions: two appends that overlap interleave their positions. A poll for what
 * is newer than a cursor must still get every event once.
 */
describe('live events in the order the track index wrote them (int)', () => {
  let database: TestDatabase;
  let pool: Pool;

  before(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 2, 60_000);
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  const index = (positions: number[]) =>
    pool.query(
      `INSERT INTO track_index (event_id, track_id, account_id, event_type, stream_name, stream_position, global_position, recorded_at)
       SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad(p::text, 12, '0'))::uuid, $1, 'EventTracked', 'stream-' || p, 0, p, now()
       FROM unnest($2::bigint[]) WITH ORDINALITY AS t(p, n) ORDER BY n`,
      [account, positions],
    );

  it('gives an event of a lower global position indexed after a poll to the next poll, and each event once', async () => {
    // One append took positions 100, 102 and 104 and committed first; another took 101 and 103.
    await index([100, 102, 104]);
    const first = await liveEvents(pool, account, { limit: 50 });
    expect(first.items.map((i) => i.globalPosition)).to.deep.equal([104, 102, 100]);
    await index([101, 103]);
    const second = await liveEvents(pool, account, { limit: 50, after: decodeLiveCursor(first.cursor) ?? undefined });
    expect(second.items.map((i) => i.globalPosition)).to.deep.equal([103, 101]);
    const third = await liveEvents(pool, account, { limit: 50, after: decodeLiveCursor(second.cursor) ?? undefined });
    expect(third.items).to.deep.equal([]);
  });
});
