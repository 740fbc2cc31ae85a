import { expect } from 'chai';
import { projections } from '../projections/index.js';
import { accountCaughtUp } from '../projections/runner/rebuild.js';
import { ProjectionWorker } from '../projections/runner/worker.js';
import { createLogger } from '../src/logger.js';
import { TestApp, type Credentials } from './support/app.js';
import { eventually, sleep, until } from './support/eventually.js';
import { send } from './support/projection-harness.js';
import { RecordedWorkerStore } from './support/recorded-worker-store.js';

/**
 * What an append woken into a worker costs (docs/performance.md, Idle freshness): the batches of
 * its account, each projection reading the new events once, and nothing else. Discovery, which
 * here polls only when woken, does not look at the store for an account it knows, and so never
 * marks the account again for events its batches already applied.
 */

const silent = createLogger('silent');
/** Discovery polls once at the start, then only when woken. */
const neverPolls = 3_600_000;

describe('a worker woken by an append (int)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  let accountId: string;
  let worker: ProjectionWorker;
  const recorder = new RecordedWorkerStore();

  const leadOf = async (userId: string): Promise<boolean> => {
    const { rows } = await app.pool.query("SELECT 1 FROM leads WHERE account_id = $1 AND profile_kind = 'user' AND profile_id = $2", [accountId, userId]);
    return rows.length > 0;
  };

  before(async () => {
    app = await TestApp.start();
    account = await app.account('woken');
    const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    accountId = rows[0]?.id ?? '';
    await send(app, account, 'users', { userId: 'first', email: 'first@example.com', attributes: {} });
    worker = new ProjectionWorker({ pool: app.pool, store: recorder.store(app.services.store), log: silent, projections, pollMs: neverPolls }).start();
    // A poll may stop short of the event while another writer of this database is open: discovery
    // is woken again until it has registered the account (a wake of an account it knows would
    // mark the account and start a round of batches of its own).
    await eventually(
      async () => {
        const { rows } = await app.pool.query('SELECT 1 FROM projection_accounts WHERE account_id = $1', [accountId]);
        if (rows.length === 0) worker.wake([accountId]);
        return rows.length > 0;
      },
      20_000,
      () => 'the account was not discovered',
      100,
    );
    await eventually(() => leadOf('first'), 20_000, () => 'the first lead was not applied');
  });

  after(async () => {
    await worker.stop();
    await app.stop();
  });

  it('applies the new events of a known account with one read, without discovery looking at the store', async () => {
    // The first round of the account's batches is over once every projection's cursor has caught up.
    await until(() => accountCaughtUp(app.pool, projections, accountId), 20_000, () => 'the first round of batches did not end');
    recorder.recording = true;
    await send(app, account, 'users', { userId: 'second', email: 'second@example.com', attributes: {} });
    worker.wake([accountId]);
    await eventually(() => leadOf('second'), 20_000, () => 'the woken account was not applied');
    // Whatever a second round would read, it would start within this.
    await sleep(1_000);
    recorder.recording = false;
    expect(recorder.scans, 'discovery scans of the store after the wake').to.equal(0);
    // One page, read for one projection and shared with the others (shared-catch-up.ts).
    expect(recorder.reads, 'catch-up reads after the wake').to.deep.equal([accountId]);
  });
});
