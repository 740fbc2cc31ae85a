import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';

/** A credential's last_used_at is kept to the minute: marked at most once a minute per process. */
const markEveryMs = 60_000;
/** Credentials remembered as marked; past it the memory starts afresh (a few extra writes, no more). */
const maxMarked = 100_000;

/**
 * Records that credentials (access tokens, browser keys) were used, off the request path: at most
 * once a minute per credential per process, without waiting for the write; a failed write only
 * loses that minute's mark. `markSql` takes an array of ids as $1.
 */
export class UseMarks {
  private readonly markedAt = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly markSql: string,
    private readonly what: string,
    private readonly log?: Logger,
  ) {}

  mark(id: string): void {
    const now = Date.now();
    if (now - (this.markedAt.get(id) ?? -Infinity) < markEveryMs) return;
    if (this.markedAt.size >= maxMarked) this.markedAt.clear();
    this.markedAt.set(id, now);
    this.pool.query(this.markSql, [[id]]).catch((error: unknown) => {
      this.log?.debug({ err: error }, `could not record when ${this.what} was last used`);
    });
  }
}
