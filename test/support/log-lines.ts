import { createLogger, type Logger } from '../../src/logger.js';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger whose lines are kept, parsed, for a test to read. */
export function capturedLog(level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger(level, { write: (text: string) => void lines.push(JSON.parse(text) as LogLine) });
  return { log, lines };
}

export const levels = { info: 30, warn: 40, error: 50 } as const;
