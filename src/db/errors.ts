/**
 * Whether a database error means "the store cannot be reached or is going away" (answer 503)
 * rather than a bug in a query (answer 500).
 */
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

export function isUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (unavailableCodes.has(code)) return true;
    // 08: connection exception; 57P0x: admin/crash shutdown, cannot connect now; 53: insufficient
    // resources; 55000 covers "database does not allow connections"; 3D000: database gone;
    // 25006: read-only transaction (a standby after a failover); 57014: statement timeout.
    if (/^(08|57P0|53)/.test(code) || ['55000', '3D000', '25006', '57014'].includes(code)) return true;
  }
  return /Connection terminated|connection timeout|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    error.message,
  );
}

/**
 * The SQLSTATE of a PostgreSQL data exception (class 22: a value the database refuses as data, such
 * as a NUL character in text, 22021, or a number out of range, 22003); null for any other error.
 */
export function dataExceptionOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) ? code : null;
}
