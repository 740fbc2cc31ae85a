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

  middleware(endpoint: Endpoint): RequestHandler {
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
        const headers = limitHeaders(limit, outcome);
        throw new AppError(
          429,
          `rate limit of ${limit} requests per minute exceeded for ${endpoint}; retry after ${headers['RateLimit-Reset']} s`,
          'request',
          'rate_limited',
          { ...headers, 'Retry-After': headers['RateLimit-Reset'] as string },
        );
      }
      next();
    };
  }
}
