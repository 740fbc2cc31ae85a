import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { accountOf } from './auth.js';
import { sentCompressed } from './content-encoding.js';

/**
 * What a body costs the heap once read, parsed, checked and handed to the event store: a few
 * copies of its bytes (the text, the parsed strings, the JSON written to the store) and, for each
 * object and array, far more than the 2 or 3 bytes it takes on the wire. Measured in
 * docs/decisions.md (Limits); the figures are upper bounds of what the shapes cost.
 */
export const heapBytesPerBodyByte = 10;
export const heapBytesPerContainer = 64;

export function parsedBodyCost(bytes: number, containers: number): number {
  return bytes * heapBytesPerBodyByte + containers * heapBytesPerContainer;
}

/** An account holding other requests may pass this share of the budget only while half of it is free. */
const accountShare = 1 / 4;
const freeForOne = 1 / 2;
/** The last quarter of the budget is kept for accounts that hold nothing yet. */
const sharedPart = 3 / 4;

export const busyMessage = 'the service is holding as much request data as it may: nothing was stored, retry shortly';

/** 503 with Retry-After: nothing was stored, and the same request may come back in a second. */
export function busy(message = busyMessage): AppError {
  return new AppError(503, message, 'request', 'busy', { 'Retry-After': '1' });
}

/** What one request holds of the budget; it grows as its body arrives and once it is parsed. */
export class BodyReservation {
  held = 0;
  private released = false;

  constructor(
    private readonly budget: BodyBudget,
    readonly account: string,
  ) {}

  /** Takes `bytes` more; false, taking nothing, when the budget or the account's share is full. */
  grow(bytes: number): boolean {
    if (this.released || bytes <= 0) return true;
    return this.budget.take(this, bytes);
  }

  /** Gives back all it holds; later growth takes nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this);
  }
}

const reservations = new WeakMap<Request, BodyReservation>();

/** The reservation `BodyBudget.reserve` made for the request, if any. */
export const reservationOf = (req: Request): BodyReservation | undefined => reservations.get(req);

/**
 * The memory that the ingest request bodies a process holds may take, in bytes of heap as
 * `parsedBodyCost` estimates it. A request reserves its bytes as they arrive (after decompression:
 * what it holds, not what it declares), then what it will cost once parsed, before it is parsed;
 * past the budget it is answered 503 with Retry-After and nothing is stored. A body declared by
 * Content-Length that could not fit now is refused before it is read. Fairness: an account that
 * already holds a request may take more only while three quarters of the budget are not taken, and
 * past a quarter only while half is free, so that a busy account uses an idle process but two
 * accounts cannot shut a third out; the request of an account holding nothing may use the rest,
 * and a request that finds nothing held always gets in, so that a body as large as the budget can
 * still be sent.
 */
export class BodyBudget {
  private held = 0;
  private readonly heldByAccount = new Map<string, number>();

  constructor(
    /** 0: no budget. */
    readonly maxBytes: number,
    private readonly metrics?: Metrics,
  ) {}

  /**
   * For a route whose bodies are at most `limitBytes`; runs after authentication. A request whose
   * credential is in its body (a Segment page's writeKey) is not authenticated yet: its share is
   * its client address's, as a page's many visitors each have their own.
   */
  reserve(limitBytes: number): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (this.maxBytes === 0) return next();
      const holder = res.locals.account === undefined ? `address ${req.ip ?? ''}` : accountOf(res).id;
      const reservation = new BodyReservation(this, holder);
      const declared = Number(req.get('content-length'));
      if (!sentCompressed(req) && Number.isSafeInteger(declared) && declared >= 0 && !this.couldTake(reservation, parsedBodyCost(Math.min(declared, limitBytes), 0))) throw busy();
      reservations.set(req, reservation);
      res.once('close', () => reservation.release());
      next();
    };
  }

  private couldTake(reservation: BodyReservation, bytes: number): boolean {
    const others = this.held - reservation.held;
    if (others === 0) return true;
    const ofAccount = this.heldByAccount.get(reservation.account) ?? 0;
    const accountOthers = ofAccount - reservation.held;
    const total = this.held + bytes;
    if (accountOthers > 0) return total <= this.maxBytes * sharedPart && (ofAccount + bytes <= this.maxBytes * accountShare || total <= this.maxBytes * freeForOne);
    return total <= this.maxBytes;
  }

  /** @internal BodyReservation.grow */
  take(reservation: BodyReservation, bytes: number): boolean {
    if (!this.couldTake(reservation, bytes)) return false;
    this.add(reservation, bytes);
    return true;
  }

  /** @internal BodyReservation.release */
  give(reservation: BodyReservation): void {
    this.add(reservation, -reservation.held);
  }

  private add(reservation: BodyReservation, bytes: number): void {
    reservation.held += bytes;
    this.held += bytes;
    const ofAccount = (this.heldByAccount.get(reservation.account) ?? 0) + bytes;
    if (ofAccount === 0) this.heldByAccount.delete(reservation.account);
    else this.heldByAccount.set(reservation.account, ofAccount);
    this.metrics?.bodyBytesInFlight.set(this.held);
  }
}
