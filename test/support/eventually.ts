/** Waiting in tests for what happens in other processes: polls with a deadline, never a fixed sleep. */

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Polls `probe` until it gives a value (not undefined/false); fails with `what` after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`after ${timeoutMs} ms: ${what()}`);
    await sleep(25);
  }
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
