import type { Pool } from '../../src/db/pool.js';
import { inTransaction } from '../../src/db/transaction.js';
import type { EventStore } from '../../src/eventstore/port.js';
import * as sql from './accounts-sql.js';
import { partOf } from './parts.js';

/** Events looked at per read of the store for accounts. */
const scanLimit = 50_000;
/** How often the shared record of how far the store has been read for accounts is moved. */
const storeEveryMs = 1_000;

export type DiscoverySource = Pick<EventStore, 'scanAccounts' | 'comparePositions'>;

/**
 * Finds the accounts that have new events by reading the store in catch-up order (the account of
 * each event only, where the store allows), from where the shared record says every account before
 * is known. New accounts are registered, with their part and a position before their first event;
 * every account met is handed to `onEvents`. Each process reads for itself: the registry is
 * shared, the cursor is this process's own.
 */
export class AccountDiscovery {
  private cursor: string | null = null;
  private readonly known = new Map<string, number>();
  private lastStored = 0;

  constructor(
    private readonly pool: Pool,
    private readonly store: DiscoverySource,
    /** Accounts with new events, each with the position just past the last of them. */
    private readonly onEvents: (accounts: { accountId: string; last: string }[]) => void,
  ) {}

  /** Loads the registry: the accounts known, and where to read on from. */
  async load(): Promise<void> {
    const [accounts, discovered] = await Promise.all([
      this.pool.query<{ account_id: string; part: number }>(sql.selectAccounts),
      this.pool.query<{ checkpoint: string | null }>('SELECT checkpoint FROM projection_discovery'),
    ]);
    for (const row of accounts.rows) this.known.set(row.account_id, row.part);
    this.cursor = discovered.rows[0]?.checkpoint ?? null;
  }

  /** Whether the account is registered (its cursors know where to start). */
  knows(accountId: string): boolean {
    return this.known.has(accountId);
  }

  /** Known accounts of these parts. */
  accountsIn(parts: ReadonlySet<number>): string[] {
    return [...this.known].filter(([, part]) => parts.has(part)).map(([accountId]) => accountId);
  }

  /**
   * Whether the last poll looked at every event stored then: nothing new, or all of it. Under
   * steady traffic a poll always finds something new, and still reaches the end.
   */
  get caughtUp(): boolean {
    return this.caughtUpNow;
  }

  private caughtUpNow = false;

  /** Reads on; true when there is more to read at once. */
  async poll(): Promise<boolean> {
    const scan = await this.store.scanAccounts(this.cursor, scanLimit);
    this.caughtUpNow = scan.checkpoint === this.cursor || scan.atEnd === true;
    if (scan.checkpoint === this.cursor) return false;
    const fresh = scan.accounts.filter((a) => !this.known.has(a.accountId));
    if (fresh.length) {
      const parts = fresh.map((a) => partOf(a.accountId));
      await this.pool.query(sql.registerAccounts, [fresh.map((a) => a.accountId), parts, fresh.map((a) => a.before)]);
      fresh.forEach((a, i) => this.known.set(a.accountId, parts[i] as number));
    }
    this.cursor = scan.checkpoint;
    if (scan.accounts.length) this.onEvents(scan.accounts);
    if (performance.now() - this.lastStored >= storeEveryMs) await this.storeCursor();
    return true;
  }

  /**
   * Moves the shared record forward to this process's cursor. Valid whoever else moved it: this
   * process has registered every account from where the record stood when it loaded, on.
   */
  private async storeCursor(): Promise<void> {
    this.lastStored = performance.now();
    const cursor = this.cursor;
    await inTransaction(this.pool, async (client) => {
      // A worker paused or cut off in here must not hold the record's lock for long.
      await client.query("SET LOCAL idle_in_transaction_session_timeout = '5s'");
      const { rows } = await client.query<{ checkpoint: string | null }>(sql.selectDiscovered);
      const row = rows[0];
      if (row && this.store.comparePositions(cursor, row.checkpoint) > 0) await client.query(sql.storeDiscovered, [cursor]);
    });
  }
}
