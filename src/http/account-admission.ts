import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../metrics.js';
import { accountOf } from './auth.js';
import { busy } from './body-budget.js';

/** Requests of one account waiting for a turn; past it, 503: a client holding more connections gains nothing. */
const maxWaitingPerAccount = 64;
/** An account is sending while it has an ingest request in flight, and this long after its last. */
export const sendingWindowMs = 1_000;

interface Turns {
  running: number;
  waiting: (() => void)[];
}

/**
 * Turns for accounts' bulk requests. The API's event loop, its cores and the store are shared by
 * every account: one account's import on many connections filled them, and a single request of
 * another account waited behind every bulk request in flight (docs/performance.md, Freshness per
 * account). So while another account is sending too, at most `sharedTurns` bulk requests of an
 * account are read, parsed, checked and stored at once; the others wait, bodies unread, in the
 * order they came. An account sending alone is not held back: a turn limit costs a lone import
 * 17-22% of its rate. A turn is held until the reply is sent or the client goes away (a client
 * that goes away mid-request frees it before its items are stored). Requests whose account is
 * known only from their body (Segment's key in the body) and pages' batches pass.
 */
export class AccountAdmission {
  private readonly turns = new Map<string, Turns>();
  /** Ingest requests in flight, per account. */
  private readonly inFlight = new Map<string, number>();
  /** When each account's last request ended, oldest first (an update moves it to the end). */
  private readonly ended = new Map<string, number>();
  private waiting = 0;

  constructor(
    /** ACCOUNT_BULK_CONCURRENCY; 0: no limit. */
    private readonly sharedTurns: number,
    private readonly metrics?: Metrics,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Notes an ingest request of one item: it makes its account one that is sending. */
  single(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (res.locals.account !== undefined && !gone(req, res)) this.track(accountOf(res).id, req, res);
      next();
    };
  }

  /** A bulk request: after the account is known, before the body is read. */
  bulk(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (res.locals.account === undefined || gone(req, res)) return next();
      const accountId = accountOf(res).id;
      // A page's batches (a browser key) are small, and many visitors share the account: they only
      // mark it as sending, so that one visitor's slow upload never holds the others' turn.
      if (this.sharedTurns <= 0 || res.locals.browserKeyId !== undefined) {
        this.track(accountId, req, res);
        return next();
      }
      const turns = this.turns.get(accountId) ?? { running: 0, waiting: [] };
      this.turns.set(accountId, turns);
      const mayStart = turns.waiting.length === 0 && turns.running < this.limitOf(accountId);
      if (!mayStart && turns.waiting.length >= maxWaitingPerAccount) {
        throw busy(`${maxWaitingPerAccount} bulk requests of this account are already waiting: nothing was stored, retry shortly`);
      }
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      const start = (): void => {
        state = 'running';
        turns.running += 1;
        next();
      };
      this.track(accountId, req, res, () => {
        if (state === 'running') turns.running -= 1;
        else if (state === 'waiting') {
          turns.waiting.splice(turns.waiting.indexOf(start), 1);
          this.countWaiting(-1);
        }
        state = 'done';
        this.passOn(accountId, turns);
      });
      if (mayStart) return start();
      turns.waiting.push(start);
      this.countWaiting(1);
    };
  }

  /** Bulk requests of the account that may run at once now. */
  private limitOf(accountId: string): number {
    return this.othersSending(accountId) ? this.sharedTurns : Infinity;
  }

  private othersSending(accountId: string): boolean {
    this.forgetQuiet();
    const inFlightOthers = this.inFlight.size - (this.inFlight.has(accountId) ? 1 : 0);
    const endedOthers = this.ended.size - (this.ended.has(accountId) ? 1 : 0);
    return inFlightOthers > 0 || endedOthers > 0;
  }

  /** Forgets when accounts quiet for longer than the window last sent. */
  private forgetQuiet(): void {
    const now = this.clock();
    for (const [id, at] of this.ended) {
      if (now - at <= sendingWindowMs) break;
      this.ended.delete(id);
    }
  }

  /** Counts the request as its account's until it closes; then `closed`, if any. */
  private track(accountId: string, req: Request, res: Response, closed?: () => void): void {
    this.inFlight.set(accountId, (this.inFlight.get(accountId) ?? 0) + 1);
    whenClosed(req, res, () => {
      const left = (this.inFlight.get(accountId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(accountId, left);
      else this.inFlight.delete(accountId);
      this.ended.delete(accountId);
      this.ended.set(accountId, this.clock());
      this.forgetQuiet();
      closed?.();
    });
  }

  private countWaiting(change: number): void {
    this.waiting += change;
    this.metrics?.bulkRequestsWaiting.set(this.waiting);
  }

  private passOn(accountId: string, turns: Turns): void {
    const limit = this.limitOf(accountId);
    while (turns.running < limit && turns.waiting.length > 0) {
      const next = turns.waiting.shift();
      this.countWaiting(-1);
      next?.();
    }
    if (turns.running === 0 && turns.waiting.length === 0 && this.turns.get(accountId) === turns) this.turns.delete(accountId);
  }
}

/** Whether the client went away before the request got here: no 'close' is to come. */
function gone(req: Request, res: Response): boolean {
  return res.destroyed || req.socket.destroyed;
}

/**
 * `done` once, when the reply is sent or the connection closes. A request queued behind another on
 * a keep-alive connection (pipelining) gets no 'close' of its own on every Node version when the
 * socket goes, so the socket's is heard too.
 */
function whenClosed(req: Request, res: Response, done: () => void): void {
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    req.socket.off('close', once);
    done();
  };
  res.once('close', once);
  req.socket.once('close', once);
}
