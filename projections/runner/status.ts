import type { Pool } from '../../src/db/pool.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { projections } from '../index.js';
import * as accountsSql from './accounts-sql.js';
import type { AccountCheckpointRow } from './accounts-sql.js';
import * as claimsSql from './claims-sql.js';
import type { PartRow, WorkerRow } from './claims-sql.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import * as parkedSql from './parked-sql.js';
import type { ParkedRow } from './parked-sql.js';
import type { Projection } from './projection.js';

export interface RebuildStatus {
  state: 'requested' | 'running' | 'finished';
  requestedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** Events to replay, counted when it started. */
  target: number | null;
}

export interface ParkedEvent {
  eventId: string;
  eventType: string;
  accountId: string | null;
  globalPosition: number;
  error: string;
  sqlstate: string | null;
  attempts: number;
  parkedAt: string;
}

/** Parked events shown per projection (the latest first). */
const latestParkedShown = 3;
/** Accounts listed as furthest behind. */
const worstShown = 10;
/**
 * Accounts whose backlog status counts in the store, every one of them up to this many; past it,
 * those the workers report behind. Each costs a read per projection.
 */
const accountsCounted = 200;

export interface ProjectionStatus {
  projection: string;
  /** Events applied, over every account, since the projection's cursors were made. */
  eventsApplied: number;
  updatedAt: string | null;
  /** Events stored and not applied yet, over the accounts counted. */
  lagEvents: number;
  /** The store stopped counting: the lag is at least lagEvents. */
  lagEventsAtLeast?: true;
  /** Age of the oldest event not applied yet, of any account. */
  lagSeconds: number;
  /** Accounts with events not applied yet. */
  accountsBehind: number;
  rebuild: RebuildStatus | null;
  /** Events the projection could not apply, set aside (docs/projections.md): how many, and the latest. */
  parked: { events: number; latest: ParkedEvent[] };
}

export interface PartStatus {
  part: number;
  /** The worker holding it (pid@host and id), or null when nobody does. */
  owner: { worker: string; workerId: string } | null;
  epoch: number;
  leaseExpiresAt: string | null;
  claimedAt: string | null;
  /** What its owner reported last: accounts behind and the worst of them. */
  accountsBehind: number | null;
  reportedAt: string | null;
}

export interface WorkerStatus {
  workerId: string;
  /** pid@host. */
  worker: string;
  startedAt: string;
  heartbeatAt: string;
  parts: number[];
}

export interface AccountLag {
  accountId: string;
  projection: string;
  lagEvents: number;
  lagSeconds: number;
  checkpoint: string | null;
}

/** Everything `tracking projections status` shows. */
export interface ProjectionsStatus {
  projections: ProjectionStatus[];
  parts: PartStatus[];
  workers: WorkerStatus[];
  /** The accounts furthest behind, worst first (at most 10). */
  accountsBehind: AccountLag[];
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function rebuildOf(row: CheckpointRow | undefined): RebuildStatus | null {
  if (!row) return null;
  const state = row.rebuild_requested_at ? 'requested' : row.rebuild_started_at ? (row.rebuild_finished_at ? 'finished' : 'running') : null;
  if (!state) return null;
  return {
    state,
    requestedAt: iso(row.rebuild_requested_at),
    startedAt: iso(row.rebuild_started_at),
    finishedAt: iso(row.rebuild_finished_at),
    target: row.rebuild_target,
  };
}

function parkedOf(rows: (ParkedRow & { parked: number })[]): ProjectionStatus['parked'] {
  return {
    events: rows[0]?.parked ?? 0,
    latest: rows.map((p) => ({
      eventId: p.event_id,
      eventType: p.event_type,
      accountId: p.account_id,
      globalPosition: Number(p.global_position),
      error: p.error,
      sqlstate: p.sqlstate,
      attempts: p.attempts,
      parkedAt: p.parked_at.toISOString(),
    })),
  };
}

type StatusStore = Pick<EventStore, 'backlogs' | 'scanAccounts' | 'comparePositions'>;

/**
 * The backlog of each (projection, account) counted: every account registered or stored past the
 * registry, up to `accountsCounted`; past that, the accounts the workers report behind.
 */
export async function accountBacklogs(pool: Pool, store: StatusStore, now = Date.now(), only?: string): Promise<AccountLag[]> {
  const [accounts, cursors, discovered, parts, bounds] = await Promise.all([
    pool.query<{ account_id: string; first_checkpoint: string | null }>('SELECT account_id, first_checkpoint FROM projection_accounts'),
    pool.query<AccountCheckpointRow>(accountsSql.selectCursors),
    pool.query<{ checkpoint: string | null }>('SELECT checkpoint FROM projection_discovery'),
    pool.query<PartRow>(claimsSql.selectParts),
    pool.query<CheckpointRow>(sql.selectCheckpoints),
  ]);
  const starts = new Map(accounts.rows.map((row) => [row.account_id, row.first_checkpoint]));
  // Accounts stored past the registry's record are not registered yet: counted from the start.
  for (let from = discovered.rows[0]?.checkpoint ?? null, pages = 0; pages < 20 && only === undefined; pages += 1) {
    const scan = await store.scanAccounts(from, 50_000, { withUnsettled: true });
    for (const a of scan.accounts) if (!starts.has(a.accountId)) starts.set(a.accountId, a.before);
    if (scan.checkpoint === from) break;
    from = scan.checkpoint;
  }
  let counted = only === undefined ? [...starts.keys()] : [only];
  if (counted.length > accountsCounted) {
    const reported = new Set(parts.rows.flatMap((p) => p.lag?.worst.map((w) => w.accountId) ?? []));
    counted = counted.filter((id) => reported.has(id));
  }
  const cursorOf = new Map(cursors.rows.map((row) => [`${row.projection}\u0000${row.account_id}`, row.checkpoint]));
  const readers = projections.flatMap((projection) => {
    const appliedBefore = bounds.rows.find((row) => row.projection === projection.name)?.checkpoint ?? null;
    return counted.map((accountId) => {
      const key = `${projection.name}\u0000${accountId}`;
      const first = starts.get(accountId) ?? null;
      const checkpoint = cursorOf.has(key) ? (cursorOf.get(key) ?? null) : store.comparePositions(first, appliedBefore) >= 0 ? first : appliedBefore;
      return { projection: projection.name, accountId, checkpoint, filter: { types: projection.eventTypes, accountId } };
    });
  });
  const backlogs = await store.backlogs(readers);
  const lags: AccountLag[] = [];
  readers.forEach((reader, i) => {
    const backlog = backlogs[i];
    if (!backlog || backlog.events === 0) return;
    lags.push({
      accountId: reader.accountId,
      projection: reader.projection,
      lagEvents: backlog.events,
      lagSeconds: backlog.oldestRecordedAt ? Math.max(0, now - Date.parse(backlog.oldestRecordedAt)) / 1000 : 0,
      checkpoint: reader.checkpoint,
    });
  });
  return lags.sort((a, b) => b.lagSeconds - a.lagSeconds || b.lagEvents - a.lagEvents);
}

/** How far behind one account's read models are: the oldest of its events not applied yet, by any projection. */
export async function lagOfAccount(pool: Pool, store: StatusStore, accountId: string, now = Date.now()): Promise<{ lagSeconds: number; lagEvents: number }> {
  const lags = await accountBacklogs(pool, store, now, accountId);
  return { lagSeconds: lags[0]?.lagSeconds ?? 0, lagEvents: lags.reduce((sum, lag) => sum + lag.lagEvents, 0) };
}

/** Events not applied yet, over every projection and account (the tests wait for none). */
export async function eventsBehind(pool: Pool, store: StatusStore): Promise<number> {
  return (await accountBacklogs(pool, store)).reduce((sum, lag) => sum + lag.lagEvents, 0);
}

/** Parts and their owners, workers, and per projection what is applied and what is behind. */
export async function projectionStatus(pool: Pool, store: StatusStore, now = Date.now()): Promise<ProjectionsStatus> {
  const [checkpoints, applied, parked, parts, workers, lags] = await Promise.all([
    pool.query<CheckpointRow>(sql.selectCheckpoints),
    pool.query<{ projection: string; applied: string; updated_at: Date | null }>(
      'SELECT projection, coalesce(sum(events_applied), 0)::bigint::text AS applied, max(updated_at) AS updated_at FROM projection_account_checkpoints GROUP BY projection',
    ),
    pool.query<ParkedRow & { parked: number }>(parkedSql.parkedSummary, [latestParkedShown]),
    pool.query<PartRow>(claimsSql.selectParts),
    pool.query<WorkerRow>(claimsSql.selectWorkers),
    accountBacklogs(pool, store, now),
  ]);
  const statusOf = (projection: Projection): ProjectionStatus => {
    const row = checkpoints.rows.find((r) => r.projection === projection.name);
    const sums = applied.rows.find((r) => r.projection === projection.name);
    const of = lags.filter((lag) => lag.projection === projection.name);
    return {
      projection: projection.name,
      eventsApplied: Number(sums?.applied ?? 0),
      updatedAt: iso(sums?.updated_at ?? null),
      lagEvents: of.reduce((sum, lag) => sum + lag.lagEvents, 0),
      lagSeconds: of[0]?.lagSeconds ?? 0,
      accountsBehind: of.length,
      rebuild: rebuildOf(row),
      parked: parkedOf(parked.rows.filter((p) => p.projection === projection.name)),
    };
  };
  const live = new Set(workers.rows.map((w) => w.worker_id));
  const held = (p: PartRow): boolean => p.owner !== null && live.has(p.owner) && p.lease_expires_at !== null && p.lease_expires_at.getTime() > now;
  const worstAccounts = new Map<string, AccountLag>();
  for (const lag of lags) if (!worstAccounts.has(lag.accountId)) worstAccounts.set(lag.accountId, lag);
  return {
    projections: projections.map(statusOf),
    parts: parts.rows.map((p) => ({
      part: p.part,
      owner: held(p) && p.owner ? { worker: p.owner_name ?? '?', workerId: p.owner } : null,
      epoch: Number(p.epoch),
      leaseExpiresAt: iso(p.lease_expires_at),
      claimedAt: iso(p.claimed_at),
      accountsBehind: held(p) ? (p.lag?.accountsBehind ?? null) : null,
      reportedAt: iso(p.lag_at),
    })),
    workers: workers.rows.map((w) => ({
      workerId: w.worker_id,
      worker: w.name,
      startedAt: w.started_at.toISOString(),
      heartbeatAt: w.heartbeat_at.toISOString(),
      parts: parts.rows.filter((p) => p.owner === w.worker_id && held(p)).map((p) => p.part),
    })),
    accountsBehind: [...worstAccounts.values()].slice(0, worstShown),
  };
}
