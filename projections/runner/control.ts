import type pg from 'pg';
import type { EventStore } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import * as accountsSql from './accounts-sql.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import * as parkedSql from './parked-sql.js';
import * as indexesSql from './rebuild-indexes-sql.js';
import type { Pool } from '../../src/db/pool.js';
import { inTransaction, inTransactionOn } from '../../src/db/transaction.js';
import { neverAppends } from '../../src/eventstore/postgres-sql.js';
import type { Projection } from './projection.js';

export interface ControlEvents {
  /** A rebuild of the projection started (here or in another worker): its cursors are gone, replay every account. */
  onRestarted(projection: Projection): void;
  /** An account was rebuilt: replay it. */
  onAccountReset(accountId: string): void;
}

/**
 * What every worker looks at now and then besides the events: whole rebuilds asked for (one
 * worker empties the read models and removes the cursors; every worker then replays its
 * accounts), rebuilds finished (every account's cursor caught up), and accounts rebuilt alone.
 */
export class RebuildControl {
  private readonly startedSeen = new Map<string, number>();
  /** Rebuilds whose indexes this worker is making again. */
  private readonly finishing = new Map<string, Promise<void>>();
  /** The latest account reset seen, as PostgreSQL writes it (accounts-sql.ts, accountsResetSince). */
  private resetSeen = '-infinity';

  constructor(
    private readonly pool: Pool,
    private readonly projections: readonly Projection[],
    private readonly store: Pick<EventStore, 'backlog'>,
    private readonly log: Logger,
    private readonly events: ControlEvents,
  ) {}

  /** The current reset time, so that a worker starting now replays no account rebuilt before. */
  async load(client: pg.ClientBase): Promise<void> {
    for (const projection of this.projections) await client.query(sql.ensureCheckpoint, [projection.name]);
    const { rows } = await client.query<{ latest: string | null }>(accountsSql.latestReset);
    this.resetSeen = rows[0]?.latest ?? '-infinity';
    const checkpoints = await client.query<CheckpointRow>(sql.selectCheckpoints);
    for (const row of checkpoints.rows) this.startedSeen.set(row.projection, row.rebuild_started_at?.getTime() ?? 0);
  }

  /** One look; `discoveryCaughtUp`: this worker has registered every account stored so far. */
  async check(client: pg.ClientBase, discoveryCaughtUp: boolean): Promise<void> {
    const { rows } = await client.query<CheckpointRow>(sql.selectCheckpoints);
    for (const projection of this.projections) {
      let row = rows.find((r) => r.projection === projection.name);
      if (row?.rebuild_requested_at) row = (await this.restart(client, projection, row.rebuild_requested_at)) ?? row;
      const started = row?.rebuild_started_at?.getTime() ?? 0;
      if (started !== (this.startedSeen.get(projection.name) ?? 0)) {
        this.startedSeen.set(projection.name, started);
        this.events.onRestarted(projection);
      }
      if (row?.rebuild_started_at && !row.rebuild_finished_at && discoveryCaughtUp && !this.finishing.has(projection.name)) {
        const behind = await client.query<{ accounts: number }>(accountsSql.accountsNotCaughtUp, [projection.name]);
        if ((behind.rows[0]?.accounts ?? 1) === 0) {
          // Making the indexes again can take minutes: beside the heartbeat, never in its way.
          const finishing = this.finish(projection)
            .catch((error: unknown) => this.log.warn({ err: error, projection: projection.name }, 'rebuild not finished yet; tried again at the next look'))
            .finally(() => this.finishing.delete(projection.name));
          this.finishing.set(projection.name, finishing);
        }
      }
    }
    const reset = await client.query<{ account_id: string; reset_at: string }>(accountsSql.accountsResetSince, [this.resetSeen]);
    for (const row of reset.rows) {
      this.resetSeen = row.reset_at;
      this.events.onAccountReset(row.account_id);
    }
  }

  /**
   * Makes again the indexes the rebuild dropped, then marks it finished, in one transaction holding
   * the projection's row (another worker that finds it caught up at the same time does nothing).
   * The tables' writes wait for the index builds; the reads were slower without them meanwhile.
   */
  private async finish(projection: Projection): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('SET LOCAL statement_timeout = 0');
      // Index builds take long: catch-up reads must not wait for them.
      await client.query(neverAppends);
      const locked = await client.query(sql.lockCheckpointNoWait, [projection.name]).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === '55P03') return null;
        throw error;
      });
      if (!locked?.rowCount) return;
      const kept = await client.query<{ index_name: string; definition: string }>(indexesSql.keptIndexes, [projection.name]);
      for (const index of kept.rows) {
        const present = await client.query<{ present: boolean }>(indexesSql.indexExists, [index.index_name]);
        if (!present.rows[0]?.present) await client.query(index.definition);
        await client.query(indexesSql.forgetIndex, [projection.name, index.index_name]);
      }
      const finished = await client.query<CheckpointRow>(sql.finishRebuild, [projection.name]);
      if (finished.rowCount) this.log.info({ projection: projection.name, indexes: kept.rows.length }, 'rebuild finished');
    });
  }

  /** Resolves when the index builds under way here are over (a worker stopping). */
  async settled(): Promise<void> {
    await Promise.all([...this.finishing.values()]);
  }

  /**
   * Empties the projection's read models and removes its cursors, in one transaction, if this
   * worker is the first to act on the request; null otherwise. The tables' secondary indexes are
   * dropped (kept in projection_rebuild_indexes) for the replay to load the tables without them.
   */
  private async restart(client: pg.ClientBase, projection: Projection, requestedAt: Date): Promise<CheckpointRow | null> {
    const { name, tables, eventTypes } = projection;
    const target = await this.store.backlog(null, { types: eventTypes });
    const restarted = await inTransactionOn(client, async () => {
      await client.query(neverAppends);
      const { rows } = await client.query<CheckpointRow>(sql.restartCheckpoint, [name, target.events, requestedAt]);
      // Another worker acted on the request first: nothing was changed.
      if (!rows[0]) return null;
      // The cursors first: a batch in flight holds its account's, and ends before they go.
      await client.query(sql.forgetCursors, [name]);
      await client.query(`TRUNCATE ${tables.join(', ')}`);
      const indexes = await client.query<{ name: string; definition: string }>(indexesSql.secondaryIndexes, [tables]);
      for (const index of indexes.rows) {
        await client.query(indexesSql.keepIndex, [name, index.name, index.definition]);
        await client.query(`DROP INDEX ${index.name}`);
      }
      await client.query(sql.forgetAppliedEventIds, [name]);
      await client.query(parkedSql.forgetParked, [name]);
      return rows[0];
    });
    if (restarted) this.log.info({ projection: name, events: target.events }, 'rebuild started');
    return restarted;
  }
}
