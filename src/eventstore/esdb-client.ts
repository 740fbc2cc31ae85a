/** The EventStoreDB adapter's client, replaced when its cached state is broken, and its errors. */

import { ErrorType, EventStoreDBClient, isCommandError } from '@eventstore/db-client';
import type { Logger } from '../logger.js';
import { StoreUnavailableError } from './port.js';

/**
 * Whether a call failed before the client reached any server: no answer and no gRPC status, as when
 * discovery found no node to connect to (a plain `Error("Failed to discover after N attempts")`).
 * Such a client keeps the failed server-features lookup of that moment and fails every later append
 * at once, also after the cluster is back: only a new client recovers.
 */
export function failedBeforeAnyCall(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof StoreUnavailableError || isCommandError(error)) return false;
  return typeof (error as { code?: unknown }).code !== 'number';
}

const isCommandErrorOf = (error: unknown, type: ErrorType): boolean => error instanceof Error && isCommandError(error) && error.type === type;

export const isWrongExpectedVersion = (error: unknown): boolean => isCommandErrorOf(error, ErrorType.WRONG_EXPECTED_VERSION);
export const isStreamNotFound = (error: unknown): boolean => isCommandErrorOf(error, ErrorType.STREAM_NOT_FOUND);

/**
 * The client the adapter's calls go through. A call that failed before reaching any server
 * (failedBeforeAnyCall) gets its client replaced by a new one, once however many calls failed
 * with it; `onReplaced` then lets the adapter move what it holds on the old client (its catch-up
 * subscriptions) to the new one.
 */
export class EsdbClients {
  private client: EventStoreDBClient;
  private readonly disposals = new Set<Promise<void>>();

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
    private readonly onReplaced: () => void,
  ) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  get current(): EventStoreDBClient {
    return this.client;
  }

  /** A call made on `client` failed with `error`. */
  failed(client: EventStoreDBClient, error: unknown): void {
    if (client !== this.client || !failedBeforeAnyCall(error)) return;
    this.client = EventStoreDBClient.connectionString(this.connectionString);
    this.log.warn({ err: error }, 'EventStoreDB client replaced: a failed discovery leaves a client that fails every append');
    this.onReplaced();
    const disposal = disposeWithin(client, 2_000);
    this.disposals.add(disposal);
    void disposal.then(() => this.disposals.delete(disposal));
  }

  async close(): Promise<void> {
    await Promise.all([disposeWithin(this.client, 2_000), ...this.disposals]);
  }
}

/**
 * dispose() waits for every call to report its end, and a call of a connection lost earlier may
 * never do so: it gets a moment, not forever.
 */
async function disposeWithin(client: EventStoreDBClient, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([client.dispose().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
