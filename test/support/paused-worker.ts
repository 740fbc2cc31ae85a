import { expect } from 'chai';
import { sessionName } from '../../projections/runner/checkpoints-sql.js';
import type { TestApp } from './app.js';
import { cursorMoves } from './cursor-moves.js';
import { eventually } from './eventually.js';
import { everyPartHeldOnce, status } from './sharing-harness.js';
import { waitMidBatch, type WorkerProcess } from './worker-processes.js';

/**
 * A worker process paused inside a batch (stopped by a signal, or cut off by the network) while the
 * others go on: which batch it was caught in, and what must happen to that batch and its claims.
 */

/** A batch caught open: the session of the paused worker holding it, and the cursor it moved (not committed). */
export interface CaughtBatch {
  pid: number;
  projection: string;
  accountId: string;
  /** Where the cursor was when the batch began: what it moved it from. */
  checkpoint: string | null;
  /** Database clock once the worker's sessions had settled after the pause. */
  pausedAt: Date;
  /** The parts the worker held, with the epochs of its claims. */
  claims: Map<number, number>;
}

interface SessionRow {
  pid: number;
  state: string | null;
  xid: string | null;
  now: Date;
  projection: string | null;
  account_id: string | null;
  checkpoint: string | null;
}

/**
 * The sessions of worker $1 and, for one inside a batch, the cursor row its transaction moved (the
 * version others still see has the batch's transaction id as xmax).
 */
const sessionsOfWorker = `SELECT a.pid, a.state, a.backend_xid::text AS xid, clock_timestamp() AS now, c.projection, c.account_id, c.checkpoint
  FROM pg_stat_activity a LEFT JOIN projection_account_checkpoints c ON c.xmax = a.backend_xid
  WHERE a.datname = current_database() AND a.application_name = $1 ORDER BY a.pid`;

const heldBy = 'SELECT part, epoch::int AS epoch FROM projection_parts WHERE owner_name = $1';

/**
 * The worker's sessions once none runs a statement, seen the same twice in a row: what it had sent
 * before the pause (maybe still in a relay's buffer, for a cut) has reached the server.
 */
async function settledSessions(app: TestApp, worker: WorkerProcess): Promise<SessionRow[]> {
  let previous = '';
  return eventually(
    async () => {
      const { rows } = await app.pool.query<SessionRow>(sessionsOfWorker, [sessionName(worker.name)]);
      const seen = JSON.stringify(rows.map((row) => [row.pid, row.state, row.xid, row.checkpoint]));
      const settled = rows.every((row) => row.state !== 'active') && seen === previous;
      previous = seen;
      return settled && rows;
    },
    2_000,
    () => `the paused worker's sessions did not settle: ${previous}`,
  );
}

/**
 * Pauses `worker` while it is inside a batch that has moved a cursor: waits until one of its
 * sessions writes, pauses it, and waits for its sessions to settle; if none is then left inside a
 * batch (it had just committed), resumes it and tries again.
 */
export async function pauseInsideBatch(app: TestApp, worker: WorkerProcess, pause: () => Promise<void>, resume: () => Promise<void>): Promise<CaughtBatch> {
  for (let attempt = 1; attempt <= 20; attempt += 1) {
    expect(await waitMidBatch(app.pool, worker, 20_000), `the worker is inside a batch: ${worker.output()}`).to.not.equal(false);
    await pause();
    const inBatch = (await settledSessions(app, worker)).find((row) => row.state === 'idle in transaction' && row.projection !== null && row.account_id !== null);
    if (inBatch) {
      const { rows: held } = await app.pool.query<{ part: number; epoch: number }>(heldBy, [worker.name]);
      return {
        pid: inBatch.pid,
        projection: inBatch.projection as string,
        accountId: inBatch.account_id as string,
        checkpoint: inBatch.checkpoint,
        pausedAt: inBatch.now,
        claims: new Map(held.map((row) => [row.part, row.epoch])),
      };
    }
    await resume();
  }
  throw new Error('the worker was never caught inside a batch');
}

export interface Takeover {
  /** After the pause: until every part it held was held by another worker at a higher epoch. */
  takeoverMs: number;
  /** After the pause: until the server had ended the session of the caught batch. */
  sessionEndedMs: number;
  /** Database clock once the takeover was seen. */
  takenAt: Date;
}

/**
 * While `worker` stays paused: the others take its parts at higher epochs, the server ends the
 * session holding its batch (idle in a transaction longer than the lease), and another worker moves
 * the cursor on from where the caught batch had read it. `pausedAt`: performance.now() at the pause.
 */
export async function takenOverWhilePaused(app: TestApp, worker: WorkerProcess, caught: CaughtBatch, pausedAt: number): Promise<Takeover> {
  const sessionEnded = eventually(
    async () => (await app.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [caught.pid])).rowCount === 0 && performance.now() - pausedAt,
    20_000,
    () => `the session ${caught.pid} of the paused batch is still there`,
  );
  const takeover = eventually(
    async () => {
      const whole = await status(app);
      const taken = [...caught.claims].every(([part, epoch]) => {
        const now = whole.parts.find((p) => p.part === part);
        return now?.owner && now.owner.worker !== worker.name && now.epoch > epoch;
      });
      return taken && everyPartHeldOnce(whole) && performance.now() - pausedAt;
    },
    20_000,
    () => "the paused worker's parts were not taken over",
  );
  const [takeoverMs, sessionEndedMs] = await Promise.all([takeover, sessionEnded]);
  const { rows } = await app.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  const movedOn = await eventually(
    async () => (await cursorMoves(app.pool)).find((m) => m.projection === caught.projection && m.account_id === caught.accountId && m.from_checkpoint === caught.checkpoint),
    20_000,
    () => `the cursor of ${caught.projection}/${caught.accountId} did not move on from ${caught.checkpoint}`,
  );
  expect(movedOn.session, "the batch moving the cursor on from the caught one's start").to.not.equal(sessionName(worker.name));
  return { takeoverMs, sessionEndedMs, takenAt: rows[0]?.now as Date };
}

/**
 * After the paused worker went on: the batch caught open never committed (its cursor was moved on
 * from its start once, by another worker), and what the worker committed after the takeover is under
 * claims made again (epochs above those it held when paused). Returns how many batches that was.
 */
export async function expectNothingCommittedUnderOldClaims(app: TestApp, worker: WorkerProcess, caught: CaughtBatch, takenAt: Date): Promise<number> {
  const moves = await cursorMoves(app.pool);
  const fromStart = moves.filter((m) => m.projection === caught.projection && m.account_id === caught.accountId && m.from_checkpoint === caught.checkpoint);
  expect(
    fromStart.map((m) => m.session === sessionName(worker.name)),
    'moves from where the caught batch started: by the paused worker?',
  ).to.deep.equal([false]);
  const since = moves.filter((m) => m.session === sessionName(worker.name) && m.committed_at > takenAt);
  const underOld = since.filter((m) => m.part !== null && caught.claims.has(m.part) && (m.epoch ?? 0) <= (caught.claims.get(m.part) ?? 0));
  expect(underOld, 'batches committed after the takeover under a claim held when paused').to.deep.equal([]);
  return since.length;
}

/** Every session of the database, for a failure message: who waits on what. */
export async function sessionsReport(app: TestApp): Promise<string> {
  const { rows } = await app.pool.query<Record<string, unknown>>(
    `SELECT pid, application_name AS app, client_port AS port, state, wait_event_type AS wait, backend_xid::text AS xid,
            round(extract(epoch FROM clock_timestamp() - state_change)::numeric, 1)::float AS for_s, left(query, 80) AS query
     FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY application_name, pid`,
  );
  return rows.map((row) => JSON.stringify(row)).join('\n');
}
