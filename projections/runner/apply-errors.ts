import { isUnavailableError } from '../../src/db/errors.js';

/** The SQLSTATE of a PostgreSQL error; null for any other error (a Node socket error has a code too). */
export function sqlstateOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/**
 * Whether an error of `apply` is the events' fault, so that trying again cannot help: PostgreSQL
 * refused a value (SQLSTATE class 22, data exception; 23, integrity constraint), or the fold threw.
 * Anything else (connection lost, timeout, serialization failure, deadlock, resources) is transient:
 * the batch is tried again later and nothing is parked.
 */
export function isDataError(error: unknown): boolean {
  const sqlstate = sqlstateOf(error);
  if (sqlstate) return sqlstate.startsWith('22') || sqlstate.startsWith('23');
  const code = (error as { code?: unknown } | null)?.code;
  return code === undefined && !isUnavailableError(error);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The log fields of an error in an event's data: its SQLSTATE and message only. PostgreSQL's
 * `detail` (and the rest of the error) can hold the client's values: `Key (email)=(...)`, or a
 * whole row for a check constraint.
 */
export function dataErrorFields(error: unknown): { sqlstate: string | null; reason: string } {
  return { sqlstate: sqlstateOf(error), reason: messageOf(error) };
}

/** What a parked event keeps of its error: the message (at most 2,000 characters) and the SQLSTATE. */
export function storedError(error: unknown): [message: string, sqlstate: string | null] {
  return [messageOf(error).slice(0, 2_000), sqlstateOf(error)];
}
