import type { Logger } from './logger.js';

const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * A signal arriving this soon after the first is the same request: one Ctrl-C reaches this process
 * from the terminal (its whole foreground process group) and again from npm, which passes on the
 * signal it got itself.
 */
export const repeatWindowMs = 2_000;

/**
 * Calls `stop` on the first SIGINT, SIGTERM or SIGHUP. A signal within repeatWindowMs of the first
 * is ignored; a later one calls `exitNow` (the operator asks again: do not wait for the drain).
 * Installed before anything else loads, so that no signal goes unheard during start-up.
 */
export function onStopSignals(log: Logger, stop: (signal: NodeJS.Signals) => void, exitNow: () => void): void {
  let firstAt: number | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstAt === null) {
      firstAt = Date.now();
      log.info({ signal }, 'signal received');
      stop(signal);
    } else if (Date.now() - firstAt < repeatWindowMs) {
      log.debug({ signal }, 'signal repeated at once (one keypress, passed on by npm too): still stopping');
    } else {
      log.warn({ signal }, 'second signal: exiting now');
      exitNow();
    }
  };
  for (const signal of signals) process.on(signal, onSignal);
}

/** Runs a graceful stop, then exits: 0 when it finished, 1 (logged) when it failed. */
export function stopAndExit(log: Logger, stop: () => Promise<void>): void {
  stop().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}
