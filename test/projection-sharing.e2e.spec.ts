import { expect } from 'chai';
import { TestApp, type Credentials } from './support/app.js';
import { sessionName } from '../projections/runner/checkpoints-sql.js';
import { cursorMoves, recordCursorMoves } from './support/cursor-moves.js';
import { createIsolatedHost, type IsolatedHost } from './support/netns.js';
import { expectNothingCommittedUnderOldClaims, pauseInsideBatch, sessionsReport, takenOverWhilePaused, type CaughtBatch } from './support/paused-worker.js';
import { eventually } from './support/eventually.js';
import { send } from './support/projection-harness.js';
import {
  accountInEveryPart,
  describeHoldings,
  everyPartHeldOnce,
  expectAppliedOnceByOwners,
  partsOf,
  postBacklog,
  status,
  type TestAccount,
} from './support/sharing-harness.js';
import { kill, startWorker, stopStartedWorkers, waitMidBatch, type WorkerProcess } from './support/worker-processes.js';

/**
 * Worker processes sharing the 16 parts of the projections (docs/projections.md): how they split
 * them, and what happens to the parts of one that is killed, paused past its lease or cut off by the
 * network while inside a batch. Every batch that commits is recorded by the database with the part's
 * owner at the commit (support/cursor-moves.ts): none may come from a worker that lost its claim.
 */

/** Short leases, so that takeovers take a couple of seconds; small batches, so that a backlog takes many. */
const workerEnv = { PROJECTION_LEASE_MS: '1500', PROJECTION_BATCH_SIZE: '20' };
/** Generous against a busy machine; what was measured is in each failure message. */
const takeoverBoundMs = 8_000;

interface Started {
  app: TestApp;
  accounts: TestAccount[];
}

async function startApp(): Promise<Started> {
  const app = await TestApp.start();
  await recordCursorMoves(app.pool);
  return { app, accounts: await accountInEveryPart(app) };
}

/** Starts `count` workers and waits until each holds parts and every part is held once. */
async function startSharing(app: TestApp, count: number): Promise<WorkerProcess[]> {
  const workers = Array.from({ length: count }, () => startWorker(app.database.url, workerEnv));
  await eventually(
    async () => {
      const whole = await status(app);
      return everyPartHeldOnce(whole) && workers.every((w) => partsOf(whole, w).length > 0);
    },
    30_000,
    () => `workers did not share the parts: ${workers.map((w) => w.output()).join('\n')}`,
  );
  return workers;
}

/**
 * Why projections stood still: who holds which part, the database's sessions, every transaction of
 * the server holding a transaction id (of any database: any may hold back the catch-up horizon),
 * and what the given workers logged.
 */
async function stallReport(app: TestApp, workers: readonly WorkerProcess[]): Promise<string> {
  const { rows: writers } = await app.pool.query<Record<string, unknown>>(
    `SELECT pid, datname, application_name AS app, state, wait_event_type AS wait, backend_xid::text AS xid,
            round(extract(epoch FROM clock_timestamp() - xact_start)::numeric, 1)::float AS xact_s, left(query, 80) AS query
     FROM pg_stat_activity WHERE backend_xid IS NOT NULL ORDER BY xact_start`,
  );
  const logs = workers.map((w) => `${w.name}: ${w.output()}`).join('\n');
  return `${describeHoldings(await status(app))}\nsessions:\n${await sessionsReport(app)}\nwriters:\n${writers.map((row) => JSON.stringify(row)).join('\n')}\n${logs}`;
}

/**
 * The paused worker, going on, holds parts again and commits batches under them: once it holds a
 * share, items are posted to every account (the backlog may all have been applied by the others
 * meanwhile), and some of them are its to apply.
 */
async function backAtWork(app: TestApp, accounts: readonly Credentials[], worker: WorkerProcess, caught: CaughtBatch, timeoutMs: number): Promise<void> {
  let last = '';
  try {
    await eventually(
      async () => {
        const whole = await status(app);
        last = describeHoldings(whole);
        return partsOf(whole, worker).length > 0 && everyPartHeldOnce(whole);
      },
      timeoutMs,
      () => `the worker ${worker.name} did not take a share again: ${last}`,
    );
    await postBacklog(app, accounts, 1);
    await eventually(
      async () => {
        const moves = (await cursorMoves(app.pool)).filter((m) => m.session === sessionName(worker.name) && m.committed_at > caught.pausedAt);
        last = `${describeHoldings(await status(app))}; ${moves.length} batches since`;
        return moves.length > 0;
      },
      timeoutMs,
      () => `the worker ${worker.name} committed no batch under its new claims: ${last}`,
    );
  } catch (error) {
    throw new Error(`${String(error)}\nsessions:\n${await sessionsReport(app)}\nworker output: ${worker.output()}`);
  }
}

describe('projection workers sharing the parts (e2e)', function () {
  this.timeout(120_000);
  let started: Started | null = null;
  let host: IsolatedHost | null = null;
  afterEach(async () => {
    await stopStartedWorkers();
    await host?.destroy();
    host = null;
    await started?.app.stop();
    started = null;
  });

  it('two workers split the 16 parts 8/8, three hold at most 6 each with every part held once, and items posted meanwhile reach the read models', async () => {
    started = await startApp();
    const { app, accounts } = started;
    let posting = true;
    let rounds = 0;
    // Items of every account keep coming while workers join.
    const feeding = (async () => {
      while (posting) {
        const round = rounds++;
        await Promise.all(
          accounts.map((account: Credentials, i) =>
            Promise.all([
              send(app, account, 'users', { userId: `live-${i}-${round % 7}`, attributes: { round } }),
              send(app, account, 'events', { userId: `live-${i}-${round % 7}`, eventName: 'Live', eventData: { round } }),
              send(app, account, 'products', { productId: `sku-${round % 3}`, properties: { round } }),
            ]),
          ),
        );
      }
    })();
    try {
      const first = startWorker(app.database.url, workerEnv);
      await eventually(async () => partsOf(await status(app), first).length === 16, 30_000, () => `the first worker holds every part: ${first.output()}`);

      const second = startWorker(app.database.url, workerEnv);
      const split = await eventually(
        async () => {
          const whole = await status(app);
          return whole.workers.length === 2 && partsOf(whole, first).length === 8 && partsOf(whole, second).length === 8 && everyPartHeldOnce(whole) && whole;
        },
        20_000,
        () => `two workers did not split the parts 8/8: ${first.output()} ${second.output()}`,
      );
      expect(split.workers.map((w) => w.worker).sort()).to.deep.equal([first.name, second.name].sort());

      const third = startWorker(app.database.url, workerEnv);
      const three = await eventually(
        async () => {
          const whole = await status(app);
          const counts = [first, second, third].map((w) => partsOf(whole, w).length);
          return whole.workers.length === 3 && counts.every((n) => n > 0 && n <= 6) && everyPartHeldOnce(whole) && whole;
        },
        20_000,
        () => `three workers did not split the parts at most 6 each`,
      );
      expect(three.parts.map((p) => p.owner?.worker).filter((w) => w === undefined), describeHoldings(three)).to.deep.equal([]);
      // Each of the three has applied batches of the accounts of its parts.
      await eventually(
        async () => {
          const { rows } = await app.pool.query<{ session: string }>('SELECT DISTINCT session FROM test_cursor_moves');
          return [first, second, third].every((w) => rows.some((r) => r.session.endsWith(` ${w.name}`)));
        },
        20_000,
        () => 'not every worker committed a batch',
      );
    } finally {
      posting = false;
      await feeding;
    }
    expect(rounds, 'rounds of items posted while the workers joined').to.be.above(2);
    await app.projected(30_000);
    await expectAppliedOnceByOwners(app, 'three workers');
  });

  it('a worker SIGKILLed inside a batch: its parts go to the others at higher epochs within seconds, and every event is applied once', async () => {
    started = await startApp();
    const { app, accounts } = started;
    await postBacklog(app, accounts, 6);
    const workers = await startSharing(app, 3);
    const victim = workers[0] as WorkerProcess;
    const midBatch = await waitMidBatch(app.pool, victim, 20_000);
    expect(midBatch, `the worker is inside a batch: ${victim.output()}`).to.not.equal(false);
    const before = await status(app);
    const lost = before.parts.filter((p) => p.owner?.worker === victim.name);
    expect(lost.length, describeHoldings(before)).to.be.above(0);
    const killedAt = performance.now();
    expect((await kill(victim, 'SIGKILL')).signal).to.equal('SIGKILL');

    const taken = await eventually(
      async () => {
        const whole = await status(app);
        const taken = lost.every((old) => {
          const now = whole.parts.find((p) => p.part === old.part);
          return now?.owner && now.owner.worker !== victim.name && now.epoch > old.epoch;
        });
        return taken && everyPartHeldOnce(whole) && whole;
      },
      20_000,
      () => 'the killed worker\'s parts were not taken over',
    );
    const takeoverMs = performance.now() - killedAt;
    expect(takeoverMs, `takeover of parts ${lost.map((p) => p.part).join(',')} after the kill`).to.be.below(takeoverBoundMs);
    expect(taken.workers.map((w) => w.worker).sort()).to.deep.equal(workers.slice(1).map((w) => w.name).sort());
    const { rows } = await app.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_cursor_moves');
    console.log(`      takeover after SIGKILL: ${Math.round(takeoverMs)} ms; moves so far ${rows[0]?.n}`);

    try {
      await app.projected(60_000);
    } catch (error) {
      // What stood still, for the failure message: who holds what, the sessions, and what the workers logged.
      throw new Error(`${String(error)}\n${await stallReport(app, workers.slice(1)).catch((failed: unknown) => `(no report: ${String(failed)})`)}`);
    }
    await expectAppliedOnceByOwners(app, 'after the kill');
  });
  it('a worker SIGSTOPped inside a batch past its lease: the others take its parts, the server ends its transaction, and once continued it commits nothing under the old claims', async () => {
    started = await startApp();
    const { app, accounts } = started;
    await postBacklog(app, accounts, 6);
    const workers = await startSharing(app, 3);
    const victim = workers[0] as WorkerProcess;
    let pausedAt = 0;
    const caught = await pauseInsideBatch(
      app,
      victim,
      async () => {
        victim.child.kill('SIGSTOP');
        pausedAt = performance.now();
        await Promise.resolve();
      },
      async () => {
        victim.child.kill('SIGCONT');
        await Promise.resolve();
      },
    );
    const { takeoverMs, sessionEndedMs, takenAt } = await takenOverWhilePaused(app, victim, caught, pausedAt);
    expect(victim.child.exitCode, 'still there, stopped').to.equal(null);
    expect(takeoverMs, 'takeover after the stop').to.be.below(takeoverBoundMs);
    expect(sessionEndedMs, 'the stopped batch\'s session ended by the server after the stop').to.be.below(takeoverBoundMs);

    victim.child.kill('SIGCONT');
    // It goes on: claims a share again, at new epochs, and applies batches under them.
    await backAtWork(app, accounts, victim, caught, 30_000);
    await app.projected(60_000);
    const since = await expectNothingCommittedUnderOldClaims(app, victim, caught, takenAt);
    console.log(`      SIGSTOP: takeover ${Math.round(takeoverMs)} ms, session ended ${Math.round(sessionEndedMs)} ms; ${since} batches of the continued worker`);
    await expectAppliedOnceByOwners(app, 'after the stop');
  });

  it('a worker cut off by the network inside a batch: the others take its parts, and once the link is back it commits nothing under the lost claims', async () => {
    started = await startApp();
    const { app, accounts } = started;
    host = await createIsolatedHost();
    const isolated = host;
    await postBacklog(app, accounts, 6);
    const victim = startWorker(await isolated.urlInside(app.database.url), workerEnv, { inside: isolated });
    const others = [startWorker(app.database.url, workerEnv), startWorker(app.database.url, workerEnv)];
    await eventually(
      async () => {
        const whole = await status(app);
        return everyPartHeldOnce(whole) && [victim, ...others].every((w) => partsOf(whole, w).length > 0);
      },
      30_000,
      () => `workers did not share the parts: ${victim.output()}`,
    );
    let cutAt = 0;
    const caught = await pauseInsideBatch(
      app,
      victim,
      async () => {
        await isolated.cut();
        cutAt = performance.now();
      },
      () => isolated.restore(),
    );
    const { takeoverMs, sessionEndedMs, takenAt } = await takenOverWhilePaused(app, victim, caught, cutAt);
    expect(takeoverMs, 'takeover after the cut').to.be.below(takeoverBoundMs);
    expect(sessionEndedMs, 'the cut-off batch\'s session ended by the server after the cut').to.be.below(takeoverBoundMs);

    await isolated.restore();
    const restoredAt = performance.now();
    await backAtWork(app, accounts, victim, caught, 45_000);
    const backMs = performance.now() - restoredAt;
    await app.projected(60_000);
    const since = await expectNothingCommittedUnderOldClaims(app, victim, caught, takenAt);
    console.log(`      cut: takeover ${Math.round(takeoverMs)} ms, session ended ${Math.round(sessionEndedMs)} ms; back ${Math.round(backMs)} ms after the restore; ${since} batches since`);
    await expectAppliedOnceByOwners(app, 'after the cut');
  });
});
