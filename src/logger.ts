import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

// Credentials never reach the log: headers are not logged, and these paths are censored if they appear.
const redact = {
  paths: [
    'authorization',
    '*.authorization',
    '*.headers.authorization',
    'accessToken',
    '*.accessToken',
    'token',
    '*.token',
    'password',
    '*.password',
    'databaseUrl',
  ],
  censor: '[redacted]',
};

export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = { level, redact, base: { service: 'tracking-ingestion' } };
  return destination ? pino(options, destination) : pino(options);
}
