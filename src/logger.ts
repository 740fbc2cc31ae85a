import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

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

export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT, or pretty when the output is a terminal (a person reads it) and JSON otherwise (a log
 * collector reads it). An unknown LOG_FORMAT is reported by `createLogger`, not fatal.
 */
export function logFormat(fd: number, setting = process.env.LOG_FORMAT): LogFormat {
  if (setting === 'json' || setting === 'pretty') return setting;
  return isatty(fd) ? 'pretty' : 'json';
}

/**
 * A logger writing to `destination`: a file descriptor (1 = stdout, the default; 2 = stderr) in the
 * format of `logFormat`, or a stream, which gets JSON lines. Writes are synchronous, so that the last
 * lines before an exit ("stopped", a fatal error) are not lost.
 */
export function createLogger(level = process.env.LOG_LEVEL || 'info', destination: DestinationStream | 1 | 2 = 1): Logger {
  const options = { level, redact, base: { service: 'tracking-ingestion' } };
  if (typeof destination !== 'number') return pino(options, destination);
  const format = logFormat(destination);
  const log =
    format === 'pretty'
      ? pino(
          options,
          pretty({
            destination,
            sync: true,
            colorize: isatty(destination),
            translateTime: 'SYS:HH:MM:ss.l',
            ignore: 'pid,hostname,service',
          }),
        )
      : pino(options, pino.destination({ dest: destination, sync: true }));
  const setting = process.env.LOG_FORMAT;
  if (setting && setting !== format) log.warn({ LOG_FORMAT: setting }, `LOG_FORMAT must be json or pretty: using ${format}`);
  return log;
}
