import { expect } from 'chai';
import type { Reply, StoredEvent, TestApp } from './app.js';

/** Small assertions on ingest replies and stored events, shared by the e2e specs. */

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ErrorFormA {
  error: string;
  code: number;
}

export interface ItemResultBody {
  status: string;
  trackID?: string;
  message?: string;
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** Asserts 200 `{ response: { status: 'queued', trackID } }` and returns the trackID. */
export function queued(reply: Reply): string {
  expect(reply.status, show(reply)).to.equal(200);
  const response = (reply.body as { response?: ItemResultBody }).response;
  expect(response?.status, show(reply)).to.equal('queued');
  expect(response?.trackID, show(reply)).to.be.a('string').and.match(uuidPattern);
  return response?.trackID as string;
}

/** Asserts 400 form B `{ response: { status: 'error', message } }` (nothing else) and returns the message. */
export function itemError(reply: Reply): string {
  expect(reply.status, show(reply)).to.equal(400);
  expect(reply.body, show(reply)).to.be.an('object').that.has.all.keys('response');
  const response = (reply.body as { response: unknown }).response;
  expect(response, show(reply)).to.be.an('object').that.has.all.keys('status', 'message');
  const { status, message } = response as { status: unknown; message: unknown };
  expect(status).to.equal('error');
  expect(message).to.be.a('string').that.has.length.above(0);
  return message as string;
}

/** Asserts form A `{ error, code }` with `code` equal to the HTTP status, and returns the error text. */
export function requestError(reply: Reply, status: number): string {
  expect(reply.status, show(reply)).to.equal(status);
  expect(reply.headers.get('content-type') ?? '', show(reply)).to.contain('application/json');
  expect(reply.body, show(reply)).to.be.an('object').that.has.all.keys('error', 'code');
  const body = reply.body as ErrorFormA;
  expect(body.code).to.equal(status);
  expect(body.error).to.be.a('string').that.has.length.above(0);
  return body.error;
}

/** The results of a bulk reply (asserting HTTP 200 and an array). */
export function bulkResults(reply: Reply): ItemResultBody[] {
  expect(reply.status, show(reply)).to.equal(200);
  const response = (reply.body as { response?: unknown }).response;
  expect(response, show(reply)).to.be.an('array');
  return response as ItemResultBody[];
}

export async function eventsOfType(app: TestApp, type: string): Promise<StoredEvent[]> {
  return (await app.events()).filter((event) => event.event_type === type);
}

/** Runs `work` and asserts that the event store holds no more events afterwards than before. */
export async function storesNothing<T>(app: TestApp, work: () => Promise<T>): Promise<T> {
  const before = (await app.events()).length;
  const result = await work();
  expect((await app.events()).length, 'events stored by a rejected request').to.equal(before);
  return result;
}

/** Asserts the metadata every event carries (docs/events.md, Metadata and event ids): the trackID, the account id, receivedAt, schemaVersion. */
export function expectMetadata(event: StoredEvent | undefined, trackID: string): void {
  expect(event?.metadata).to.include({ trackId: trackID, schemaVersion: 1 });
  expect(event?.metadata.accountId).to.be.a('string').and.match(uuidPattern);
  expect(Date.parse(String(event?.metadata.receivedAt))).to.be.closeTo(Date.now(), 60_000);
}

/** The internal account id of `app`'s events (from the metadata of the first stored event). */
export function accountIdOf(event: StoredEvent | undefined): string {
  const accountId = event?.metadata.accountId;
  expect(accountId).to.be.a('string').and.match(uuidPattern);
  return accountId as string;
}
