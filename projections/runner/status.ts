import type { Pool } from '../../src/db/pool.js';
import type { EventStore } from '../../src/eventstore/port.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import { projections } from '../index.js';
import * as parkedSql from './parked-sql.js';
import type { ParkedRow } from './parked-sql.js';

export interface WorkerSession {
  /** `pid@host` of the worker process. */
  worker: string;
  /** Backend pid of its database session. */
  sessionPid: number;
}

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

export interface ProjectionStatus {
  projection: string;
  checkpoint: string | null;
  eventsApplied: number;
  updatedAt: string | null;
  lagEvents: number;
  /** The store stopped counting: the lag is at least lagEvents. */
  lagEventsAtLeast?: true;
  lagSeconds: number;
  active: (WorkerSession & { since: string }) | null;
  standby: WorkerSession[];
  rebuild: RebuildStatus | null;
  /** Events the projection could not apply, set aside (docs/projections.md): how many, and the latest. */
  parked: { events: number; latest: ParkedEvent[] };
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

const workerOf = (applicationName: string): string => sql.parseSessionName(applicationName).worker;

/** Checkpoint, lag, active worker and standbys of every projection. */
export async function projectionStatus(pool: Pool, store: EventStore, now = Date.now()): Promise<ProjectionStatus[]> {
  const [checkpoints, holders, sessions, parked] = await Promise.all([
    pool.query<CheckpointRow>(sql.selectCheckpoints),
    pool.query<{ lock_key: number; pid: number; application_name: string }>(sql.lockHolders),
    pool.query<{ pid: number; application_name: string }>(sql.workerSessions),
    pool.query<ParkedRow & { parked: number }>(parkedSql.parkedSummary, [latestParkedShown]),
  ]);
  return Promise.all(
    projections.map(async (projection): Promise<ProjectionStatus> => {
      const row = checkpoints.rows.find((r) => r.projection === projection.name);
      const holder = holders.rows.find((h) => h.lock_key === projection.lockKey);
      const backlog = await store.backlog(row?.checkpoint ?? null, { types: projection.eventTypes });
      return {
        projection: projection.name,
        checkpoint: row?.checkpoint ?? null,
        eventsApplied: row?.events_applied ?? 0,
        updatedAt: iso(row?.updated_at ?? null),
        lagEvents: backlog.events,
        ...(backlog.atLeast && { lagEventsAtLeast: true }),
        lagSeconds: backlog.oldestRecordedAt ? Math.max(0, now - Date.parse(backlog.oldestRecordedAt)) / 1000 : 0,
        active: holder
          ? {
              worker: workerOf(holder.application_name),
              sessionPid: holder.pid,
              // The time the holder marked when it took the lock (its connection may be older). A
              // holder not marked yet has taken the lock this instant, and marks it next.
              since: (row?.active_worker === workerOf(holder.application_name) && row.active_since ? row.active_since : new Date(now)).toISOString(),
            }
          : null,
        standby: sessions.rows
          .filter((s) => sql.parseSessionName(s.application_name).projection === projection.name && s.pid !== holder?.pid)
          .map((s) => ({ worker: workerOf(s.application_name), sessionPid: s.pid })),
        rebuild: rebuildOf(row),
        parked: parkedOf(parked.rows.filter((p) => p.projection === projection.name)),
      };
    }),
  );
}
