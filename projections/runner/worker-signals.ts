import type { Logger } from '../../src/logger.js';
import { FailureBackoff } from './failure-backoff.js';

/**
 * The waits of a projection worker's loops and what ends them: the stop, a wake of the discovery
 * loop (an append in this process), and a wake of the lanes (a mark, a claim). A wait ended early
 * costs nothing; one that is never ended runs out after its time, so a lost wake only delays.
 */
export class WorkerSignals {
  private stoppedNow = false;
  private wakeLoop: (() => void) | null = null;
  /** Lanes waiting for a job. */
  private readonly laneWaiters = new Set<() => void>();
  /** Sleeps that a stop ends. */
  private readonly onStop = new Set<() => void>();
  /** Set by a wake of the loop, cleared when the loop starts a pass. */
  private woken = false;

  get stopped(): boolean {
    return this.stoppedNow;
  }

  stop(): void {
    this.stoppedNow = true;
    this.wakeAll();
  }

  /** Ends the discovery loop's wait (or the next one, if it is not waiting). */
  wakeDiscovery(): void {
    this.woken = true;
    this.wakeLoop?.();
  }

  /**
   * Ends the lanes' waits (a mark, a claim), not the discovery loop's: new work for the lanes is
   * no news for discovery, whose look would only compete with their batches.
   */
  wakeLanes(): void {
    for (const wake of [...this.laneWaiters]) wake();
  }

  /** Ends every wait but the timed sleeps (which only a stop ends). */
  wakeAll(): void {
    this.wakeLoop?.();
    this.wakeLanes();
    if (this.stoppedNow) for (const stop of [...this.onStop]) stop();
  }

  /** The discovery loop starts a pass: wakes before this one are answered by it. */
  passStarted(): void {
    this.woken = false;
  }

  /**
   * Runs `step` until the worker stops (or it says `done`); a step that throws is logged and tried
   * again after a wait that grows while the failures go on.
   */
  async untilStopped(log: Logger, step: () => Promise<'again' | 'done'>, onFailure?: () => void): Promise<void> {
    const failures = new FailureBackoff(log);
    while (!this.stoppedNow) {
      try {
        if ((await step()) === 'done') return;
        failures.recovered();
      } catch (error) {
        if (this.stoppedNow) return;
        onFailure?.();
        failures.report(error);
        await this.sleepFor(failures.retryDelay());
        failures.retrying();
      }
    }
  }

  /** Sleeps `ms`, or less if the worker stops. */
  sleepFor(ms: number): Promise<void> {
    return this.stoppedNow ? Promise.resolve() : timedWait(this.onStop, ms);
  }

  /** The discovery loop's wait between passes: `ms`, or until a wake or the stop. */
  loopIdle(ms: number): Promise<void> {
    if (this.stoppedNow || this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeLoop = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeLoop = done;
    });
  }

  /** A lane's wait until there may be a job (a mark, a claim), `ms` at most, or the stop. */
  laneIdle(ms: number): Promise<void> {
    return this.stoppedNow ? Promise.resolve() : timedWait(this.laneWaiters, ms);
  }
}

/** Waits `ms`, or until the end it puts in `waiters` is called; either way the end leaves `waiters`. */
function timedWait(waiters: Set<() => void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    }
    waiters.add(done);
  });
}
