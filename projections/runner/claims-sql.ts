/** SQL of workers and their claims on parts (tables projection_workers, projection_parts). */

export interface PartRow {
  part: number;
  owner: string | null;
  owner_name: string | null;
  epoch: string;
  lease_expires_at: Date | null;
  claimed_at: Date | null;
  lag: PartLag | null;
  lag_at: Date | null;
}

/** What the owner of a part last reported of it (status). */
export interface PartLag {
  /** Accounts of the part with events not applied yet. */
  accountsBehind: number;
  /** The accounts furthest behind, worst first (a few). */
  worst: { accountId: string; seconds: number; projections: string[] }[];
}

export interface WorkerRow {
  worker_id: string;
  name: string;
  started_at: Date;
  heartbeat_at: Date;
  expires_at: Date;
}

/** $1 worker id, $2 name, $3 lease in ms: registers the worker or renews its entry. */
export const heartbeat = `INSERT INTO projection_workers (worker_id, name, expires_at)
  VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
  ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = clock_timestamp(), expires_at = excluded.expires_at`;

export const liveWorkers = 'SELECT count(*)::int AS live FROM projection_workers WHERE expires_at > clock_timestamp()';

/** Entries expired long ago (a worker that died) are dropped by whoever renews its own. */
export const forgetDeadWorkers = "DELETE FROM projection_workers WHERE expires_at < clock_timestamp() - interval '1 hour'";

export const forgetWorker = 'DELETE FROM projection_workers WHERE worker_id = $1';

/**
 * Renews the leases worker $1 still holds ($2 ms more) of the parts $3 at the epochs $4: those it
 * counts as its own. A lease that expired is not renewed: the part must be claimed again, at a new
 * epoch, so that a batch begun under the old one never commits. Nor is a part the worker no longer
 * counts (a batch found it lost): its lease runs out and any worker may claim it.
 */
export const renewLeases = `UPDATE projection_parts SET lease_expires_at = clock_timestamp() + $2 * interval '1 millisecond'
  WHERE owner = $1 AND lease_expires_at > clock_timestamp()
    AND (part, epoch) IN (SELECT * FROM unnest($3::int[], $4::bigint[]))
  RETURNING part, epoch::text AS epoch`;

/**
 * Claims up to $4 parts that nobody holds or whose lease expired, for worker $1 (name $2) for $3
 * ms, each at a new epoch. Parts locked by a batch committing under its old owner are skipped.
 */
export const claimFree = `UPDATE projection_parts p
  SET owner = $1, owner_name = $2, epoch = p.epoch + 1, claimed_at = clock_timestamp(),
      lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond', lag = NULL, lag_at = NULL
  WHERE p.part IN (
    SELECT part FROM projection_parts
    WHERE owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp()
    ORDER BY part
    LIMIT $4
    FOR UPDATE SKIP LOCKED)
  RETURNING p.part, p.epoch::text AS epoch`;

/** Gives part $2 up, if worker $1 still holds it at epoch $3. */
export const release = `UPDATE projection_parts SET owner = NULL, owner_name = NULL, lease_expires_at = NULL, lag = NULL, lag_at = NULL
  WHERE part = $2 AND owner = $1 AND epoch = $3::bigint`;

/**
 * The fence, run in a batch's transaction just before it commits: the row only if worker $1 still
 * holds part $2 at epoch $3 and its lease runs. It stays share-locked until the commit, so no other
 * worker can claim the part in between.
 */
export const fence = `SELECT part FROM projection_parts
  WHERE part = $2 AND owner = $1 AND epoch = $3::bigint AND lease_expires_at > clock_timestamp()
  FOR SHARE`;

/** $3 the owner's view of part $2 (PartLag), if worker $1 holds it. */
export const reportLag = `UPDATE projection_parts SET lag = $3::jsonb, lag_at = clock_timestamp() WHERE part = $2 AND owner = $1`;

export const selectParts = 'SELECT *, epoch::text AS epoch FROM projection_parts ORDER BY part';

export const selectWorkers = 'SELECT * FROM projection_workers WHERE expires_at > clock_timestamp() ORDER BY started_at';
