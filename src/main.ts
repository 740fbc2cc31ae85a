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
  const { reviverSeesSource } = await import('./ingest/exact-integers.js');
  if (!reviverSeesSource) {
    throw new Error(
      `Node.js ${process.version} does not give JSON.parse the source text of numbers, which the service needs to refuse integers a double would round (docs/decisions.md): run it on Node.js 24, as npm start does`,
    );
  }
  const { startService } = await import('./server.js');
  service = await startService(loadConfig(), log, { ownSession: true });
  if (stopRequested) stopAndExit(log, service.stop);
} catch (error) {
  log.fatal({ err: error }, 'service failed to start');
  process.exit(1);
}
