import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import type { RunningService } from './server.js';
import { onStopSignals, stopAndExit } from './stop-signals.js';

const log = createLogger();

let service: RunningService | null = null;
let stopRequested = false;

// A signal during start-up stops the service as soon as it is up. Exiting at once leaves the
// embedded server to a fast shutdown of its own (it is told so on exit).
onStopSignals(
  log,
  () => {
    stopRequested = true;
    if (service) stopAndExit(log, service.stop);
  },
  () => process.exit(1),
);

try {
  const { startService } = await import('./server.js');
  service = await startService(loadConfig(), log, { ownSession: true });
  if (stopRequested) stopAndExit(log, service.stop);
} catch (error) {
  log.fatal({ err: error }, 'service failed to start');
  process.exit(1);
}
