/**
 * The process's lifetime and the clients' items. Timers hold the process only while a client holds
 * items; an idle client holds nothing. Two process hooks, installed once for all clients:
 * `beforeExit` (the event loop ran empty) sends items that wait for a cut with flushIntervalMs 0, so
 * that a script that queues items and simply ends still delivers them; `exit` (process.exit(), or
 * the loop ran empty with items undeliverable) reports the items still held.
 */
export interface HoldingClient {
  sendWaiting(): void;
  reportUndelivered(): void;
}

const holding = new Set<HoldingClient>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  process.on('beforeExit', () => {
    for (const client of [...holding]) client.sendWaiting();
  });
  process.on('exit', () => {
    for (const client of holding) client.reportUndelivered();
  });
}

export function holds(client: HoldingClient): void {
  install();
  holding.add(client);
}

export function released(client: HoldingClient): void {
  holding.delete(client);
}
