import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { latestOfAccount } from '../projections/track-index/sql.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/** A node of PostgreSQL's JSON plan, as far as this test reads it. */
interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

const accounts = 20;
const rows = 200_000;
const accountId = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Live events are polled every second by each open dashboard: a page and a poll must read only
 * the index entries of the rows they return (a few more with a kind filter), at any table size.
 */
describe('live events query plan (int)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let pool: Pool;

  before(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 2, 60_000);
    // 200,000 indexed events over 20 accounts, interleaved; each account's cycle through the types,
    // a tenth of them products.
    await pool.query(
      `INSERT INTO track_index (event_id, track_id, account_id, event_type, stream_name, stream_position, global_position, recorded_at, item_name, user_id)
       SELECT gen_random_uuid(), gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((g % $1)::text, 12, '0'))::uuid,
              (ARRAY['UserUpserted', 'UserUpserted', 'EventTracked', 'EventTracked', 'EventTracked', 'EventTracked', 'EventTracked', 'ProfilesMerged', 'ProductEventTracked', 'ProductSubmitted'])[(g / $1) % 10 + 1],
              'stream-' || g, 0, g, now(),
              -- Every account's events carry 20 names and its items 500 people.
              CASE WHEN (g / $1) % 10 IN (2, 3, 4, 5, 6, 8) THEN 'event-' || (g / $1) % 20 END, 'user-' || (g / $1) % 500
       FROM generate_series(1, $2) AS g`,
      [accounts, rows],
    );
    await pool.query('ANALYZE track_index');
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  const plan = async (given: [string, number, string | null, string[] | null], filters: [string | null, string | null] = [null, null]): Promise<PlanNode[]> => {
    const params = [...given, null, ...filters];
    const { rows: explained } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${latestOfAccount}`, params);
    return nodesOf((explained[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan);
  };

  /**
   * The plan reads track_index_by_account, and from it no more than `maxRowsRead` entries. In order
   * (no sort), unless `mayBitmap`: for the few rows past a recent cursor PostgreSQL may rather fetch
   * them and sort them, which costs no more.
   */
  const expectIndexWalk = (nodes: PlanNode[], maxRowsRead: number, mayBitmap = false, index = 'track_index_by_account'): void => {
    const types = nodes.map((n) => n['Node Type']);
    expect(types.some((t) => /Seq Scan/.test(t)), JSON.stringify(types)).to.equal(false);
    if (!mayBitmap) expect(types.some((t) => /Sort|Bitmap/.test(t)), JSON.stringify(types)).to.equal(false);
    const scan = nodes.find((n) => n['Index Name'] === index);
    expect(scan, JSON.stringify(types)).to.not.equal(undefined);
    expect((scan?.['Actual Rows'] ?? 0) + (scan?.['Rows Removed by Filter'] ?? 0)).to.be.at.most(maxRowsRead);
  };

  it('reads a newest-first page from the index, no more rows than it returns', async () => {
    const nodes = await plan([accountId(7), 50, null, null]);
    expectIndexWalk(nodes, 50);
    expect(nodes[0]?.['Actual Rows']).to.equal(50);
  });

  it('reads a poll after a cursor from the index, stopping at the cursor', async () => {
    let newest = rows;
    while (newest % accounts !== 7) newest -= 1;
    // The account's five newest rows are past newest - 5 * accounts.
    const nodes = await plan([accountId(7), 50, String(newest - 5 * accounts), null]);
    expectIndexWalk(nodes, 5, true);
    expect(nodes[0]?.['Actual Rows']).to.equal(5);
    const none = await plan([accountId(7), 50, String(newest), null]);
    expectIndexWalk(none, 0, true);
    // A poll after a long pause: the newest 50 of the 1,000 past the cursor, in index order.
    const behind = await plan([accountId(7), 50, String(newest - 1_000 * accounts), null]);
    expectIndexWalk(behind, 50);
    expect(behind[0]?.['Actual Rows']).to.equal(50);
  });

  it('filters a kind while walking the same index: the rarer the kind, the more rows a page reads', async () => {
    // One event in ten is a product: a page of 50 reads about 500 index entries.
    const products = await plan([accountId(3), 50, null, ['ProductSubmitted']]);
    expectIndexWalk(products, 50 * 10 + 10);
    expect(products[0]?.['Actual Rows']).to.equal(50);
    const users = await plan([accountId(3), 50, null, ['UserUpserted', 'ProfilesMerged']]);
    expectIndexWalk(users, 50 * 4);
    expect(users[0]?.['Actual Rows']).to.equal(50);
  });

  it('filters by an event name or a person along an index of their own, reading only the rows it returns', async () => {
    // A name is on 3 rows of 100 of the account's: walking the account's index would read about 1,700 for 50.
    const named = await plan([accountId(5), 50, null, null], ['event-4', null]);
    expectIndexWalk(named, 50, false, 'track_index_by_account_name');
    expect(named[0]?.['Actual Rows']).to.equal(50);
    // A person is on 20 of the account's 10,000 rows: all of them, and nothing else read (fetched and
    // sorted, or in index order: either reads only those).
    const person = await plan([accountId(5), 50, null, null], [null, 'user-42']);
    expectIndexWalk(person, 20, true, 'track_index_by_account_person');
    expect(person[0]?.['Actual Rows']).to.equal(20);
  });
});
