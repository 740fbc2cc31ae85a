import { dateTimeHint, toUtcInstant } from './timestamps.js';

/**
 * The time of a Segment message (docs/segment.md, "Time"). Segment's libraries stamp each message
 * with the device's clock (`timestamp`) and the whole request with the time it was sent
 * (`sentAt`), so a device whose clock is wrong is corrected as Segment does:
 * `receivedAt − (sentAt − timestamp)`. Without `sentAt` the timestamp is taken as sent (an import
 * of past events); without either, the time of receipt.
 */

/** An instant further ahead of the time of receipt than this is refused. */
export const maxFutureMs = 24 * 60 * 60 * 1000;

export type MessageTime = { eventTime?: string } | { problem: string; field: string };

/** Milliseconds of an accepted date-time (timestamps.ts), or null. */
function millisOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const instant = toUtcInstant(value);
  return instant === null ? null : Date.parse(instant);
}

const earliest = Date.parse('0001-01-01T00:00:00Z');
const latest = Date.parse('9999-12-31T23:59:59.999Z');

/** The times of a request, read once for all its messages. */
export interface RequestClock {
  receivedAt: string;
  receivedMs: number;
  /** The batch's sentAt as sent (absent: undefined), and its milliseconds (null: not a date-time). */
  batchSentAt: unknown;
  batchSentAtMs: number | null;
}

export function requestClock(receivedAt: string, batchSentAt?: unknown): RequestClock {
  return { receivedAt, receivedMs: Date.parse(receivedAt), batchSentAt, batchSentAtMs: millisOf(batchSentAt) };
}

/**
 * The message's time as an ISO string for the spec's eventTime, or why it is refused.
 * `timestamp` falls back to `originalTimestamp` (what Segment itself stores the device's time
 * under); the message's own `sentAt` to the batch's.
 */
export function messageTime(message: Record<string, unknown>, clock: RequestClock): MessageTime {
  const field = message.timestamp !== undefined && message.timestamp !== null ? 'timestamp' : 'originalTimestamp';
  const sent = message[field];
  if (sent === undefined || sent === null) return {};
  const at = millisOf(sent);
  if (at === null) return { problem: `${field} must be ${dateTimeHint}`, field };
  const own = message.sentAt !== undefined && message.sentAt !== null;
  const sentAtValue = own ? message.sentAt : clock.batchSentAt;
  const received = clock.receivedMs;
  let time = at;
  if (sentAtValue !== undefined && sentAtValue !== null) {
    const sentAt = own ? millisOf(sentAtValue) : clock.batchSentAtMs;
    if (sentAt === null) return { problem: `sentAt must be ${dateTimeHint}`, field: 'sentAt' };
    time = received - (sentAt - at);
  }
  if (time > received + maxFutureMs) {
    return { problem: `${field} ${String(sent)} is more than 24 hours ahead of the time the message was received (${clock.receivedAt})`, field };
  }
  if (time < earliest || time > latest) return { problem: `${field} must be a date-time from year 0001 to 9999 once corrected for the device's clock`, field };
  // Unchanged, the string as sent (its zone and digits); corrected, the instant.
  return { eventTime: time === at && typeof sent === 'string' ? sent : new Date(time).toISOString() };
}
