import { expect } from 'chai';
import pg from 'pg';
import { partCount } from '../projections/runner/parts.js';
import { startProjectionThread, type ProjectionThread } from '../projections/thread-host.js';
import { loadConfig } from '../src/config.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { capturedLog } from './support/log-lines.js';

/**
 * The projection thread of `npm start`: it takes the parts, gives them up when stopped, and one
 * that dies is started again and takes the parts back once the dead one's leases have expired.
 */
describe('projection thread (int)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let observer: pg.Client;
  let thread: ProjectionThread | null = null;

  beforeEach(async () => {
    database = await freshDatabase();
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
  });
  afterEach(async () => {
    await thread?.stop();
    thread = null;
    await observer.end();
    await database.drop();
  });

  async function owners(): Promise<(string | null)[]> {
    const { rows } = await observer.query<{ owner: string | null }>('SELECT owner FROM projection_parts WHERE lease_expires_at > now() OR owner IS NULL ORDER BY part');
    return rows.map((row) => row.owner);
  }

  /** The one worker holding every part with a live lease. */
  async function soleOwner(): Promise<string> {
    return eventually(async () => {
      const held = await owners();
      const [first] = held;
      return held.length === partCount && typeof first === 'string' && held.every((owner) => owner === first) && first;
    }, 15_000, () => 'one worker holding every part');
  }

  const config = () => ({ ...loadConfig({}), databaseUrl: database.url, projectionLeaseMs: 1_000 });

  it('holds every part while it runs and gives them all up when stopped', async () => {
    const { log } = capturedLog('error');
    const started = startProjectionThread(config(), log);
    thread = started;
    await soleOwner();
    // Its metrics come from the thread: the parts it holds, once its gauge has caught up.
    await eventually(async () => {
      const parts = (await started.metrics()).find((metric) => metric.name === 'tracking_projection_parts_held');
      return parts?.values[0]?.value === partCount;
    }, 5_000, () => `tracking_projection_parts_held at ${partCount}`);
    await started.stop();
    thread = null;
    expect(await owners()).to.deep.equal(Array.from({ length: partCount }, () => null));
  });

  it('is started again when it dies, and the new worker takes the parts', async () => {
    const { log, lines } = capturedLog('error');
    const started = startProjectionThread(config(), log);
    thread = started;
    const first = await soleOwner();
    // A message the thread cannot handle throws in it: the thread dies as it would on a bug.
    started.wake(null as unknown as string[]);
    const exit = await eventually(async () => lines.find((line) => line.msg === 'projection thread exited; starting it again'), 5_000, () => 'the exit logged');
    expect(exit.restartInMs, 'the first restart after 1 s').to.equal(1_000);
    const second = await eventually(async () => {
      const owner = await soleOwner();
      return owner !== first && owner;
    }, 20_000, () => 'a new worker holding every part');
    expect(second).to.not.equal(first);
  });
});
