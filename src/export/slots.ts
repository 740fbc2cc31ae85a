/**
 * How many exports, or long polls of the feed, run at once: at most `perAccount` of one account and
 * `total` of all, so that readers holding the store's connections and pages cannot starve ingest or
 * one another (docs/export.md, Limits).
 */
export class ReaderSlots {
  private readonly byAccount = new Map<string, number>();
  private running = 0;

  constructor(
    readonly perAccount: number,
    readonly total: number,
  ) {}

  /** A slot for the account, with its release (to call once), or null when none is free. */
  take(accountId: string): (() => void) | null {
    const mine = this.byAccount.get(accountId) ?? 0;
    if (mine >= this.perAccount || this.running >= this.total) return null;
    this.byAccount.set(accountId, mine + 1);
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      const left = (this.byAccount.get(accountId) ?? 1) - 1;
      if (left === 0) this.byAccount.delete(accountId);
      else this.byAccount.set(accountId, left);
    };
  }
}
