/**
 * Which (projection, account) a free lane works on next. Pure bookkeeping, no I/O: the worker
 * marks accounts that have new events, takes jobs, and reports how each ended.
 *
 * Fairness: a free lane goes to the account with the fewest jobs in flight, and among those to the
 * one served longest ago; with more than one lane, one account never holds them all, so an account
 * with new events finds a lane at once however large another account's backlog is. The lanes but
 * one are shared among the accounts with work (or marked within `sharedWindowMs`): an account alone
 * works on several projections at once; beside another active one, each holds one lane of four.
 * Large batches of one account on every lane but one left another's small batches waiting behind
 * them for the CPU (docs/performance.md, Freshness per account). Jobs of one (projection, account)
 * never run two at a time: its events are applied in store order.
 */

export interface Job {
  projection: string;
  accountId: string;
}

interface AccountWork {
  /** Projections with events to apply, not in flight. */
  pending: Set<string>;
  /** Projections in flight, with the mark count when their job was taken. */
  inFlight: Map<string, number>;
  /** Marks so far: a mark during a job keeps it pending after the job, whatever the job found. */
  marks: number;
  lastServed: number;
  /** When the account was first marked since it was last caught up (clock of the scheduler). */
  since: number;
  /** Dropped (its part lost) with jobs in flight, and not marked since: they end without coming back. */
  dropped: boolean;
}

/** An account with events not applied yet: since when, and for which projections. */
export interface Behind {
  accountId: string;
  since: number;
  projections: string[];
}

/** How long after another account's last mark an account keeps to one lane. */
export const sharedWindowMs = 1_000;

export class FairScheduler {
  private readonly accounts = new Map<string, AccountWork>();
  /** When each account was last marked, kept while it has work and for sharedWindowMs after. */
  private readonly lastMarked = new Map<string, number>();
  private served = 0;
  private running = 0;

  constructor(
    private readonly projections: readonly string[],
    private readonly lanes: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Every account with work waiting or in flight. */
  behind(): Behind[] {
    return [...this.accounts].map(([accountId, work]) => ({ accountId, since: work.since, projections: [...new Set([...work.pending, ...work.inFlight.keys()])].sort() }));
  }

  /** Jobs in flight. */
  get inFlight(): number {
    return this.running;
  }

  /** (projection, account) pairs waiting for a lane. */
  get waiting(): number {
    let count = 0;
    for (const work of this.accounts.values()) count += work.pending.size;
    return count;
  }

  /** The account may have new events for these projections (all by default). */
  mark(accountId: string, projections: readonly string[] = this.projections): void {
    let work = this.accounts.get(accountId);
    if (!work) {
      work = { pending: new Set(), inFlight: new Map(), marks: 0, lastServed: -1, since: this.clock(), dropped: false };
      this.accounts.set(accountId, work);
    } else if (work.dropped) {
      // Its part is held again: behind from now, not from before it was lost.
      work.dropped = false;
      work.since = this.clock();
    }
    work.marks += 1;
    this.lastMarked.set(accountId, this.clock());
    for (const projection of projections) if (!work.inFlight.has(projection)) work.pending.add(projection);
  }

  /**
   * Events of the account were found (discovery) for these projections: pending, those not in
   * flight. Unlike a mark, it leaves the jobs in flight as they are: their end compares their
   * cursor with what was found (FoundEvents.past, in the worker), so a job that read the events anyway is
   * not run again to find nothing.
   */
  found(accountId: string, projections: readonly string[]): void {
    const work = this.accounts.get(accountId);
    const wanted = projections.filter((projection) => !work?.inFlight.has(projection));
    if (wanted.length === 0) return;
    if (!work || work.dropped) {
      this.mark(accountId, wanted);
      return;
    }
    this.lastMarked.set(accountId, this.clock());
    for (const projection of wanted) work.pending.add(projection);
  }

  /** Forgets the account's waiting jobs (its part was lost); jobs in flight end as they will. */
  drop(accountId: string): void {
    this.lastMarked.delete(accountId);
    const work = this.accounts.get(accountId);
    if (!work) return;
    work.pending.clear();
    if (work.inFlight.size === 0) this.accounts.delete(accountId);
    else work.dropped = true;
  }

  /** Jobs in flight for these accounts. */
  inFlightFor(accountIds: Iterable<string>): number {
    let count = 0;
    for (const id of accountIds) count += this.accounts.get(id)?.inFlight.size ?? 0;
    return count;
  }

  /** The next job for a free lane, or null; `eligible` says whether an account may be worked on now. */
  take(eligible: (accountId: string) => boolean = () => true): Job | null {
    const now = this.clock();
    for (const [accountId, at] of this.lastMarked) if (now - at > sharedWindowMs && !this.accounts.has(accountId)) this.lastMarked.delete(accountId);
    let best: { accountId: string; work: AccountWork } | null = null;
    for (const [accountId, work] of this.accounts) {
      if (work.pending.size === 0 || work.inFlight.size >= this.lanesOf(accountId) || !eligible(accountId)) continue;
      if (
        !best ||
        work.inFlight.size < best.work.inFlight.size ||
        (work.inFlight.size === best.work.inFlight.size && work.lastServed < best.work.lastServed)
      ) {
        best = { accountId, work };
      }
    }
    if (!best) return null;
    const { accountId, work } = best;
    const [projection] = work.pending as Set<string>;
    if (projection === undefined) return null;
    work.pending.delete(projection);
    work.inFlight.set(projection, work.marks);
    work.lastServed = this.served++;
    this.running += 1;
    return { projection, accountId };
  }

  /**
   * Lanes one account may hold: all but one (so that another account always finds one), shared
   * among the accounts with work now or within sharedWindowMs, and at least one.
   */
  private lanesOf(accountId: string): number {
    if (this.lanes <= 1) return 1;
    const active = this.lastMarked.size + (this.lastMarked.has(accountId) ? 0 : 1);
    return Math.max(1, Math.floor((this.lanes - 1) / active));
  }

  /**
   * A job ended: `more` when it stopped with events left (or failed), `caught-up` when it found
   * nothing more. A caught-up job stays pending if the account was marked while it ran.
   */
  finish(job: Job, outcome: 'more' | 'caught-up'): void {
    const work = this.accounts.get(job.accountId);
    const marksAtStart = work?.inFlight.get(job.projection);
    if (!work || marksAtStart === undefined) return;
    work.inFlight.delete(job.projection);
    this.running -= 1;
    if (!work.dropped && (outcome === 'more' || work.marks !== marksAtStart)) work.pending.add(job.projection);
    if (work.pending.size === 0 && work.inFlight.size === 0) this.accounts.delete(job.accountId);
  }
}
