import { expect } from 'chai';
import { createPool, queryKeepingConnection, type Pool } from '../src/db/pool.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

describe('queryKeepingConnection (int)', () => {
  let database: TestDatabase;
  let pool: Pool;
  let connections: number;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 1);
    connections = 0;
    pool.on('connect', () => (connections += 1));
  });
  afterEach(async () => {
    await pool.end();
    await database.drop();
  });

  const backendPid = async (): Promise<number> => (await queryKeepingConnection<{ pid: number }>(pool, { text: 'SELECT pg_backend_pid() AS pid' })).rows[0]?.pid ?? -1;

  it('a statement the server refused keeps its connection for the next one', async () => {
    const before = await backendPid();
    const refused = await queryKeepingConnection(pool, { text: 'SELECT 1 / $1::int AS n', values: [0] }).catch((error: unknown) => error);
    expect((refused as { code?: unknown }).code).to.equal('22012');
    expect(await backendPid()).to.equal(before);
    expect(connections).to.equal(1);
  });

  it('a connection the server ends is not handed to the caller waiting for it', async () => {
    const pid = await backendPid();
    const sleeping = queryKeepingConnection(pool, { text: 'SELECT pg_sleep(30)' }).catch((error: unknown) => error);
    // The pool's one connection is busy: this one waits for it.
    const waiting = queryKeepingConnection<{ n: number }>(pool, { text: 'SELECT 1 AS n' });
    const killer = createPool(database.url, 1);
    try {
      await killer.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await killer.end();
    }
    expect(((await sleeping) as { code?: unknown }).code).to.equal('57P01');
    expect((await waiting).rows[0]?.n).to.equal(1);
    expect(connections).to.equal(2);
  });
});
