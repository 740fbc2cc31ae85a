import { eventTimeOf, personOf, type ExportedEvent, type ExportKind } from './exported-event.js';

/** Which events an export holds (docs/export.md, Filters): each given part must match. */
export interface ExportFilter {
  kind?: ExportKind;
  /** The eventName of an event or product event, exactly. */
  name?: string;
  /** A person: the event's userId, or its anonymousId when it has no userId, exactly (as Live events filters). */
  person?: string;
  /** The time `from` and `to` bound: when the service received the event, or the event's own time. */
  time?: 'received' | 'event';
  /** Inclusive, ISO 8601 UTC. */
  from?: string;
  /** Exclusive, ISO 8601 UTC. */
  to?: string;
}

/** Instants compared as numbers: the stored texts differ in precision. */
const instant = (text: string): number => Date.parse(text);

export function matchesFilter(filter: ExportFilter, event: ExportedEvent): boolean {
  if (filter.kind !== undefined && event.kind !== filter.kind) return false;
  if (filter.name !== undefined && event.data.eventName !== filter.name) return false;
  if (filter.person !== undefined && personOf(event.data) !== filter.person) return false;
  if (filter.from !== undefined || filter.to !== undefined) {
    const at = instant(filter.time === 'event' ? eventTimeOf(event) : event.receivedAt);
    if (filter.from !== undefined && at < instant(filter.from)) return false;
    if (filter.to !== undefined && at >= instant(filter.to)) return false;
  }
  return true;
}
