import type { Request } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors.js';

/** Wrong admin tokens a client address may present in a window before it is refused for a while. */
export const failedSignInsAllowed = 20;
const windowSeconds = 10 * 60;

/**
 * Guessing the admin token (chosen by an operator, so perhaps weak), through the sign-in form or
 * the Authorization header of any route that takes it: every wrong guess costs the client's address
 * (req.ip: TRUST_PROXY decides whose headers name it) a point, and an address out of points gets 429
 * wherever it presents an admin token, until its window ends, even with the right token. Access
 * tokens are 256 random bits, beyond guessing: they are not counted (src/http/auth.ts), so a flood
 * of wrong ones locks no account owner out. Counted per process; a success does not reset the count.
 */
export class AdminTokenGuesses {
  private readonly failures = new RateLimiterMemory({ points: failedSignInsAllowed, duration: windowSeconds });

  /** Refuses an address that has used up its wrong guesses. */
  async check(req: Request): Promise<void> {
    const state = await this.failures.get(addressOf(req));
    if (state && state.consumedPoints >= failedSignInsAllowed) throw tooMany(state);
  }

  async failed(req: Request): Promise<void> {
    try {
      await this.failures.consume(addressOf(req));
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
    }
  }
}

const addressOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

function tooMany(state: RateLimiterRes): AppError {
  const seconds = String(Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
  return new AppError(429, `too many wrong admin tokens from this address; retry after ${seconds} s`, 'request', 'rate_limited', {
    'Retry-After': seconds,
  });
}
