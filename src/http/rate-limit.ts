import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Pool } from '../db/pool.js';
import { AppError } from '../errors.js';
import type { Endpoint } from '../ingest/request.js';
import { accountOf } from './auth.js';

const windowSeconds = 60;

function limitHeaders(limit: number, result: RateLimiterRes): Record<string, string> {
  const resetSeconds = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
  return {
    'RateLimit-Policy': `${limit};w=${windowSeconds}`,
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, result.remainingPoints)),
    'RateLimit-Reset': String(resetSeconds),
  };
}

/**
 * Per-account request limits. productsevents counts in Postgres, so the limit holds however many
 * processes serve; the other endpoints count per process (generous defaults, no query per request).
 * A limit of 0 turns limiting off for those endpoints.
 */
export class IngestRateLimits {
  private readonly productEvents: RateLimiterAbstract | null;
  private readonly others: RateLimiterAbstract | null;

  constructor(
    pool: Pool,
    private readonly productEventsPerMinute: number,
    private readonly otherPerMinute: number,
  ) {
    this.productEvents =
      productEventsPerMinute > 0
        ? new RateLimiterPostgres({
            storeClient: pool,
            storeType: 'pool',
            tableName: 'rate_limits',
            tableCreated: true,
            clearExpiredByTimeout: false,
            keyPrefix: 'productsevents',
            points: productEventsPerMinute,
            duration: windowSeconds,
            // Once the shared count is used up, refuse in memory until the window ends: a flood of
            // over-limit requests costs no queries.
            inMemoryBlockOnConsumed: productEventsPerMinute,
          })
        : null;
    this.others = otherPerMinute > 0 ? new RateLimiterMemory({ points: otherPerMinute, duration: windowSeconds }) : null;
  }

  middleware(endpoint: Exclude<Endpoint, 'productsevents/bulk'>): RequestHandler {
    const limiter = endpoint === 'productsevents' ? this.productEvents : this.others;
    const limit = endpoint === 'productsevents' ? this.productEventsPerMinute : this.otherPerMinute;
    if (!limiter) return (_req, _res, next) => next();
    const keyPrefix = endpoint === 'productsevents' ? '' : `${endpoint}:`;
    return async (req: Request, res: Response, next: NextFunction) => {
      const key = keyPrefix + accountOf(res).id;
      try {
        const result = await limiter.consume(key);
        res.set(limitHeaders(limit, result));
      } catch (outcome) {
        if (!(outcome instanceof RateLimiterRes)) throw outcome;
        throw rateLimited(limit, outcome, `rate limit of ${limit} requests per minute exceeded for ${endpoint}`);
      }
      next();
    };
  }

  /**
   * Counts the items of a productsevents/bulk request against the account's product-event limit
   * (the count /productsevents uses, one point an item), or refuses the request whole with 429.
   *
   * A refused request must not use the allowance up, and consume(key, points) adds its points even
   * when it refuses them; past the limit it also blocks the key in memory for the rest of the
   * window, which rewarding the points back would not undo. So the remaining points are read
   * first and a request that does not fit is refused without consuming. Two requests racing past
   * that read can still overshoot together; the one refused then gives its points back.
   */
  async consumeProductEvents(res: Response, items: number): Promise<void> {
    const limiter = this.productEvents;
    if (!limiter) return;
    const limit = this.productEventsPerMinute;
    const key = accountOf(res).id;
    const refuse = (outcome: RateLimiterRes): AppError =>
      rateLimited(limit, outcome, `rate limit of ${limit} product events per minute exceeded: this request has ${items}, ${Math.max(0, outcome.remainingPoints)} remain`);
    const current = (await limiter.get(key)) ?? new RateLimiterRes(limit, windowSeconds * 1000, 0);
    if (current.remainingPoints < items) throw refuse(current);
    try {
      res.set(limitHeaders(limit, await limiter.consume(key, items)));
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
      // Refused by the in-memory block, nothing was added; otherwise the points were added.
      if (outcome.consumedPoints > 0) await limiter.reward(key, items);
      throw refuse(outcome);
    }
  }
}

function rateLimited(limit: number, outcome: RateLimiterRes, message: string): AppError {
  const headers = limitHeaders(limit, outcome);
  return new AppError(429, `${message}; retry after ${headers['RateLimit-Reset']} s`, 'request', 'rate_limited', {
    ...headers,
    'Retry-After': headers['RateLimit-Reset'] as string,
  });
}
