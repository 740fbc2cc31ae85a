import type { ExportedEvent } from './exported-event.js';

/** One line of JSON an event, each line ending in \n (docs/export.md, NDJSON). */
export const ndjsonLines = (events: readonly ExportedEvent[]): string => {
  let text = '';
  for (const event of events) text += `${JSON.stringify(event)}\n`;
  return text;
};
