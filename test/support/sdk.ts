import { expect } from 'chai';
import pg from 'pg';
import { TrackingClient, type ItemResult, type TrackingClientOptions } from '@tracking-ingestion/sdk';
import type { Credentials, TestApp } from './app.js';

/** A client of `account` at `baseUrl` (the service, or a TestProxy in front of it). */
export function sdkClient(baseUrl: string, account: Credentials, options: Partial<TrackingClientOptions> = {}): TrackingClient {
  return new TrackingClient({ baseUrl, licenseCode: account.licenseCode, accessToken: account.accessToken, ...options });
}

/** Asserts a `queued` result and returns its trackID. */
export function queuedTrackId(result: ItemResult): string {
  expect(result).to.have.property('status', 'queued');
  return (result as { trackID: string }).trackID;
}

/** How many stored events carry each of `trackIds`, in the store's order of their first event. */
export async function storedTimes(app: TestApp, trackIds: string[]): Promise<number[]> {
  const counts = new Map<string, number>(trackIds.map((id) => [id, 0]));
  for (const event of await app.events()) {
    const id = String(event.metadata.trackId);
    if (counts.has(id)) counts.set(id, (counts.get(id) as number) + 1);
  }
  return trackIds.map((id) => counts.get(id) as number);
}

/** The trackIDs of the stored events of `type`, in the store's order. */
export async function storedTrackIds(app: TestApp, type?: string): Promise<string[]> {
  return (await app.events()).filter((event) => !type || event.event_type === type).map((event) => String(event.metadata.trackId));
}

/**
 * How many rows of the events table at `databaseUrl` carry each trackID, counted in SQL (the
 * Postgres store: loading 100,000 events through the store's port would cost more than the check).
 */
export async function timesStoredByTrackId(databaseUrl: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; times: number }>(
      "SELECT metadata->>'trackId' AS id, count(*)::int AS times FROM events GROUP BY 1",
    );
    return new Map(rows.map((row) => [row.id, row.times]));
  } finally {
    await client.end();
  }
}

/** Asserts that the store holds exactly `trackIds`, each once: nothing lost, nothing doubled, nothing else. */
export function expectEachStoredOnce(stored: Map<string, number>, trackIds: string[]): void {
  expect(new Set(trackIds).size, 'distinct trackIDs among the results').to.equal(trackIds.length);
  const notOnce = trackIds.filter((id) => stored.get(id) !== 1);
  expect(notOnce.length, `trackIDs not stored exactly once, such as ${notOnce.slice(0, 3).map((id) => `${id} (${stored.get(id) ?? 0})`).join(', ')}`).to.equal(0);
  let events = 0;
  for (const times of stored.values()) events += times;
  expect(events, 'events in the store').to.equal(trackIds.length);
}

export type Outcome<T> = { state: 'pending' } | { state: 'resolved'; value: T } | { state: 'rejected'; error: unknown };

/** Whether `promise` is settled already (without a turn of the event loop), and how. */
export async function outcomeNow<T>(promise: Promise<T>): Promise<Outcome<T>> {
  const pending = Symbol('pending');
  try {
    const value = await Promise.race([promise, Promise.resolve(pending)]);
    return value === pending ? { state: 'pending' } : { state: 'resolved', value: value as T };
  } catch (error) {
    return { state: 'rejected', error };
  }
}

/** A gate a proxy can hold requests on: `open()` lets them through. */
export function gate(): { until: Promise<void>; open(): void } {
  let open!: () => void;
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}
