/** Waiting in tests for what happens in other processes: polls with a deadline, never a fixed sleep. */

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** What a probe gives: a value once there is one, undefined or false while there is none yet. */
type Probed<T> = T | undefined | false;

/**
 * Polls `probe` (synchronous or not) every `intervalMs` until it gives a value (not undefined/false),
 * and returns that value; fails with `what` once `timeoutMs` have passed. `what` is called after
 * the last probe, so it can name the last value seen.
 */
export async function eventually<T>(probe: () => Probed<T> | Promise<Probed<T>>, timeoutMs: number, what: () => string, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`after ${timeoutMs} ms: ${what()}`);
    await sleep(intervalMs);
  }
}

/** Resolves once `condition` (synchronous or not) holds, checked every `intervalMs`; fails with `what` after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string, intervalMs = 25): Promise<void> {
  await eventually(condition, timeoutMs, what, intervalMs);
}

/** `work`, or an error naming `what` once `ms` have passed. */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
