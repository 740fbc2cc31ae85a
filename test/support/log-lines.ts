import { createLogger, type Logger } from '../../src/logger.js';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/**
 * A logger whose lines are kept, parsed, for a test to read; `written()` is the text exactly as
 * written, to search for what must never be logged.
 */
export function capturedLog(level = 'info'): { log: Logger; lines: LogLine[]; written(): string } {
  const lines: LogLine[] = [];
  const texts: string[] = [];
  const log = createLogger(level, {
    write: (text: string) => {
      texts.push(text);
      lines.push(JSON.parse(text) as LogLine);
    },
  });
  return { log, lines, written: () => texts.join('') };
}

export const levels = { info: 30, warn: 40, error: 50 } as const;
