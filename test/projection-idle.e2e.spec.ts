import { expect } from 'chai';
import type pg from 'pg';
import { projections } from '../projections/index.js';
import * as claimsSql from '../projections/runner/claims-sql.js';
import { accountCaughtUp, rebuildAccount } from '../projections/runner/rebuild.js';
import { projectionStatus } from '../projections/runner/status.js';
import { ProjectionWorker } from '../projections/runner/worker.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { TestApp, type Credentials } from './support/app.js';
import { erasureDone } from './support/erasures.js';
import { eventually, sleep, until } from './support/eventually.js';
import { send } from './support/projection-harness.js';
import { RecordedWorkerStore } from './support/recorded-worker-store.js';

/**
 * An idle worker after an erasure, an account rebuild and a restart: it reports no account behind
 * (metrics, status) within seconds, and then does no repeated work. What it does is seen through
 * what it asks: the catch-up reads of its store, and the statements on its connections.
 */

const silent = createLogger('silent');
/** The default lease: a heartbeat every 1.5 s, four or so in a window; shorter ones may lapse on a loaded machine. */
const leaseMs = 6_000;
/** Long enough for four heartbeats and three lag reports (every 2 s). */
const idleWindowMs = 6_500;

const oneLine = (sql: string): string => sql.replace(/\s+/g, ' ').trim();
/** The writes of the heartbeat: the worker's own row, its leases, and the rows of workers long dead. */
const heartbeatWrites = new Set([claimsSql.heartbeat, claimsSql.renewLeases, claimsSql.forgetDeadWorkers].map(oneLine));

/** What a worker asked in a window: catch-up reads (with the account read) and statements. */
class Recorder extends RecordedWorkerStore {
  statements: string[] = [];

  /** A pool whose every statement, on every connection, is noted while recording. */
  pool(url: string): Pool {
    const pool = createPool(url, 8, 10_000);
    pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      Object.assign(client, {
        query: (...args: unknown[]): unknown => {
          const [config] = args;
          const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text;
          if (this.recording && text !== undefined) this.statements.push(oneLine(text));
          return query(...args);
        },
      });
    });
    return pool;
  }

  async during(ms: number): Promise<void> {
    this.reads = [];
    this.statements = [];
    this.recording = true;
    await sleep(ms);
    this.recording = false;
  }
}

async function accountsBehind(metrics: Metrics): Promise<Record<string, number>> {
  const gauge = await metrics.projectionAccountsBehind.get();
  return Object.fromEntries(gauge.values.map((v) => [String(v.labels.projection), v.value]));
}

const noneBehind = Object.fromEntries(projections.map((p) => [p.name, 0]));

describe('an idle projection worker (e2e)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let recorder: Recorder;
  let pool: Pool;
  let account: Credentials;
  let accountId: string;
  const running: ProjectionWorker[] = [];

  function startWorker(metrics: Metrics): ProjectionWorker {
    const worker = new ProjectionWorker({ pool, store: recorder.store(app.services.store), log: silent, metrics, projections, pollMs: 20, leaseMs }).start();
    running.push(worker);
    return worker;
  }

  /** No account behind, as the metrics and every part's report say, once the worker has settled. */
  async function nothingBehind(metrics: Metrics): Promise<void> {
    let seen = '';
    await eventually(
      async () => {
        const gauge = await accountsBehind(metrics);
        const status = await projectionStatus(app.pool, app.services.store);
        seen = `metrics ${JSON.stringify(gauge)}, parts ${JSON.stringify(status.parts.map((p) => p.accountsBehind))}, accounts ${JSON.stringify(status.accountsBehind)}`;
        return (
          JSON.stringify(gauge) === JSON.stringify(noneBehind) &&
          status.parts.every((p) => p.accountsBehind === 0) &&
          status.accountsBehind.length === 0 &&
          status.projections.every((p) => p.accountsBehind === 0)
        );
      },
      20_000,
      () => `still behind: ${seen}`,
    );
  }

  /** Over a window of idleness: no catch-up read, no cursor or read-model write, no part's lag written twice. */
  async function expectIdle(what: string): Promise<void> {
    await recorder.during(idleWindowMs);
    expect(recorder.reads, `${what}: catch-up reads while idle`).to.deep.equal([]);
    const writes = recorder.statements.filter((s) => /\b(INSERT INTO|UPDATE|DELETE FROM|TRUNCATE)\b/i.test(s));
    const leases = writes.filter((s) => heartbeatWrites.has(s));
    const lagWrites = writes.filter((s) => s === oneLine(claimsSql.reportLag));
    expect(writes.filter((s) => !heartbeatWrites.has(s) && s !== oneLine(claimsSql.reportLag)), `${what}: writes while idle`).to.deep.equal([]);
    // Each part's unchanged lag is written again at most every 30 s: at most once per part here.
    expect(lagWrites.length, `${what}: lag reports written while idle`).to.be.at.most(16);
    // The heartbeat went on meanwhile: the window saw the worker at work, not stalled.
    expect(leases.length, `${what}: heartbeats in the window`).to.be.at.least(2);
  }

  before(async () => {
    app = await TestApp.start();
    recorder = new Recorder();
    pool = recorder.pool(app.database.url);
    account = await app.account('idle');
    const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    accountId = rows[0]?.id ?? '';
    const bystander = await app.account('bystander');
    for (const [who, creds] of [['a', account], ['b', bystander]] as const) {
      for (let i = 1; i <= 3; i += 1) {
        await send(app, creds, 'users', { userId: `${who}-${i}`, email: `${who}${i}@example.com`, attributes: {} });
        await send(app, creds, 'events', { userId: `${who}-${i}`, eventName: 'Viewed', eventData: { i } });
        await send(app, creds, 'products', { productId: `${who}-sku-${i}`, properties: { i } });
      }
    }
  });

  after(async () => {
    for (const worker of running) await worker.stop();
    await pool.end();
    await app.stop();
  });

  it('reports no account behind and does no repeated work after an erasure, an account rebuild and a restart', async () => {
    const metrics = new Metrics(false);
    const first = startWorker(metrics);
    await nothingBehind(metrics);
    await expectIdle('caught up');

    await erasureDone(app, account, { userId: 'a-1' });
    await nothingBehind(metrics);
    await expectIdle('after the erasure');

    await rebuildAccount(app.pool, projections, accountId);
    await until(() => accountCaughtUp(app.pool, projections, accountId), 20_000, () => 'the rebuilt account was not replayed');
    await nothingBehind(metrics);
    await expectIdle('after the account rebuild');

    await first.stop();
    const restarted = new Metrics(false);
    startWorker(restarted);
    await nothingBehind(restarted);
    await expectIdle('after a restart');
  });
});
