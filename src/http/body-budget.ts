import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { accountOf } from './auth.js';
import { sentCompressed } from './body.js';

/**
 * The request bodies a process holds at once, in bytes. A body costs memory several times its size
 * while it is parsed, checked and appended, so a flood of large requests is refused at the door
 * (503 with Retry-After, nothing read or stored) rather than taking the heap. The bytes are
 * reserved from Content-Length before the body is read, and given back when the reply is done. A
 * body sent without Content-Length, or compressed (whose Content-Length says nothing of what it
 * inflates to), reserves the route's limit, which bounds what it is read to. One account may hold at most half the budget, so it
 * cannot shut other accounts out; a request that finds nothing held always gets in, so that a
 * body as large as the budget can still be sent.
 */
export class BodyBudget {
  private held = 0;
  private readonly heldByAccount = new Map<string, number>();

  constructor(
    /** 0: no budget. */
    readonly maxBytes: number,
    private readonly metrics?: Metrics,
  ) {}

  /** For a route whose bodies are at most `limitBytes`; runs after authentication. */
  reserve(limitBytes: number): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (this.maxBytes === 0) return next();
      const declared = Number(req.get('content-length'));
      const bytes = !sentCompressed(req) && Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, limitBytes) : limitBytes;
      const account = accountOf(res).id;
      const ofAccount = this.heldByAccount.get(account) ?? 0;
      const full = this.held > 0 && this.held + bytes > this.maxBytes;
      const accountFull = ofAccount > 0 && ofAccount + bytes > this.maxBytes / 2;
      if (full || accountFull) {
        throw new AppError(503, 'the service is holding as much request data as it may: nothing was stored, retry shortly', 'request', 'busy', {
          'Retry-After': '1',
        });
      }
      this.take(account, bytes);
      res.once('close', () => this.take(account, -bytes));
      next();
    };
  }

  private take(account: string, bytes: number): void {
    this.held += bytes;
    const ofAccount = (this.heldByAccount.get(account) ?? 0) + bytes;
    if (ofAccount === 0) this.heldByAccount.delete(account);
    else this.heldByAccount.set(account, ofAccount);
    this.metrics?.bodyBytesInFlight.set(this.held);
  }
}
