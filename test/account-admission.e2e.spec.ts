import { expect } from 'chai';
import http from 'node:http';
import { TestApp, type Credentials } from './support/app.js';
import { eventually, until, within } from './support/eventually.js';

/**
 * Turns of bulk requests per account (docs/performance.md, Freshness per account): while another
 * account is sending, one bulk request of an account is read and stored at a time and the others
 * wait, bodies unread; an account alone is not held back; a client that gives up waiting frees its
 * place. A request is held open by sending half its body, so which requests run is seen from which
 * are answered, not from timing.
 */

interface OpenRequest {
  /** Sends the rest of the body. */
  finish(): void;
  /** Drops the connection. */
  abort(): void;
  /** The status and body once answered. */
  answer: Promise<{ status: number; body: string; retryAfter: string | undefined }>;
  answered: boolean;
}

describe('turns of bulk requests per account (e2e)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let importer: Credentials;
  let other: Credentials;

  beforeEach(async () => {
    // No minimum body rate: a body held half-sent must not be timed out while the test looks.
    app = await TestApp.start({ bulkPerAccount: 1, minBodyBytesPerSecond: 0 });
    importer = await app.account('importer');
    other = await app.account('other');
  });
  afterEach(async () => {
    await app.stop();
  });

  let sent = 0;
  /** A POST of `items` to the account's `path`, half its body sent. */
  function open(account: Credentials, path: string, items: unknown): OpenRequest {
    return openAt(`/v1/accounts/${account.licenseCode}/${path}`, `Bearer ${account.accessToken}`, items);
  }

  /** A POST of `items` to `path` with `authorization`, half its body sent. */
  function openAt(path: string, authorization: string, items: unknown): OpenRequest {
    const body = Buffer.from(JSON.stringify(items));
    const req = http.request(new URL(`${app.baseUrl}${path}`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), authorization },
    });
    const request: OpenRequest = {
      finish: () => req.end(body.subarray(body.length >> 1)),
      abort: () => req.destroy(),
      answered: false,
      answer: new Promise((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            request.answered = true;
            resolve({ status: res.statusCode ?? 0, body: text, retryAfter: res.headers['retry-after'] });
          });
        });
        req.on('error', reject);
      }),
    };
    req.write(body.subarray(0, body.length >> 1));
    return request;
  }

  const users = (count: number) => Array.from({ length: count }, () => ({ userId: `u${++sent}`, email: `u${sent}@example.com`, attributes: {} }));
  const bulk = (account: Credentials, count = 3) => open(account, 'users/bulk', users(count));

  async function gauge(name: string): Promise<number> {
    const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1]);
  }
  const waiting = () => gauge('tracking_http_bulk_requests_waiting');

  /** Opens a request and waits until the service reads its body: it has its turn (or needs none). */
  async function running(account: Credentials, path: string, items: unknown): Promise<OpenRequest> {
    const before = await gauge('tracking_http_body_bytes_in_flight');
    const request = open(account, path, items);
    await until(async () => (await gauge('tracking_http_body_bytes_in_flight')) > before, 10_000, () => `the body of a request to ${path} was not read`);
    return request;
  }

  /** Opens a bulk request (`open`: another than users/bulk) and waits until it waits for its turn. */
  async function queued(account: Credentials, open = () => bulk(account)): Promise<OpenRequest> {
    const before = await waiting();
    const request = open();
    await until(async () => (await waiting()) === before + 1, 10_000, () => 'the bulk request did not wait for its turn');
    return request;
  }

  /** The other account sending (a single request of its own in flight), and the importer's first bulk request running. */
  async function importerBesideOther(): Promise<{ single: OpenRequest; first: OpenRequest }> {
    const single = await running(other, 'users', { userId: 'someone', attributes: {} });
    const first = await running(importer, 'users/bulk', users(3));
    return { single, first };
  }

  /** A bulk request of `count` users of the other account, answered while the importer's requests wait or run. */
  async function othersBulkPasses(count: number): Promise<void> {
    const othersBulk = bulk(other, count);
    othersBulk.finish();
    await expectQueued(othersBulk, count);
  }

  async function storedUsers(): Promise<number | undefined> {
    const { rows } = await app.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE event_type = 'UserUpserted'");
    return rows[0]?.n;
  }

  async function expectQueued(request: OpenRequest, count: number): Promise<void> {
    const { status, body } = await request.answer;
    expect(status, body).to.equal(200);
    const parsed = JSON.parse(body) as { response: { status: string }[] };
    expect(parsed.response.map((r) => r.status)).to.deep.equal(Array(count).fill('queued'));
  }

  it('runs the bulk requests of an account sending alone side by side', async () => {
    const [first, second, third] = [bulk(importer), bulk(importer), bulk(importer)];
    third.finish();
    await expectQueued(third, 3);
    expect([first.answered, second.answered], 'the first two, their bodies half sent').to.deep.equal([false, false]);
    expect(await waiting()).to.equal(0);
    first.finish();
    second.finish();
    await Promise.all([expectQueued(first, 3), expectQueued(second, 3)]);
  });

  it("while another account sends, takes one bulk request of an account at a time; the other account's pass", async () => {
    // The other account is sending: a request of its own in flight.
    const { single, first } = await importerBesideOther();
    const next = await queued(importer);
    next.finish();
    await othersBulkPasses(2);
    expect(next.answered, "the importer's second request, while its first runs").to.equal(false);
    first.finish();
    await Promise.all([expectQueued(first, 3), expectQueued(next, 3)]);
    expect(await waiting()).to.equal(0);
    single.finish();
    expect((await single.answer).status).to.equal(200);
    expect(await storedUsers(), 'every user stored').to.equal(3 + 3 + 2 + 1);
  });

  it('frees the place of a request whose client went away while it waited', async () => {
    const { single, first } = await importerBesideOther();
    const gone = await queued(importer);
    const last = await queued(importer);
    last.finish();
    gone.abort();
    await gone.answer.catch(() => undefined);
    await until(async () => (await waiting()) === 1, 10_000, () => 'the request given up still waits');
    first.finish();
    await Promise.all([expectQueued(first, 3), expectQueued(last, 3)]);
    await eventually(async () => (await waiting()) === 0, 10_000, () => 'a request still waits');
    single.finish();
    await single.answer;
  });

  it('refuses with 503 and Retry-After a bulk request past 64 waiting of its account, storing none of it', async () => {
    const { single, first } = await importerBesideOther();
    const waitingRequests: OpenRequest[] = [];
    for (let i = 0; i < 64; i += 1) waitingRequests.push(await queued(importer));
    const refused = open(importer, 'users/bulk', [{ userId: 'refused', attributes: {} }]);
    refused.finish();
    const { status, body, retryAfter } = await within(refused.answer, 5_000, 'the request past 64 waiting was not refused');
    expect(status, body).to.equal(503);
    expect(retryAfter).to.equal('1');
    expect(JSON.parse(body)).to.deep.equal({ error: '64 bulk requests of this account are already waiting: nothing was stored, retry shortly', code: 503 });
    expect(await waiting(), 'the refused request takes no place').to.equal(64);
    // The other account is not held by the importer's queue.
    await othersBulkPasses(1);
    first.finish();
    for (const request of waitingRequests) request.finish();
    await Promise.all([expectQueued(first, 3), ...waitingRequests.map((request) => expectQueued(request, 3))]);
    single.finish();
    await single.answer;
    expect(await storedUsers(), 'every user but the refused one stored').to.equal(1 + 3 + 64 * 3 + 1);
  });

  it('holds a Segment batch of an account to its turn while another account sends', async () => {
    const { single, first } = await importerBesideOther();
    const basic = `Basic ${Buffer.from(`${importer.accessToken}:`).toString('base64')}`;
    const identify = (userId: string) => ({ type: 'identify', userId, messageId: `m-${userId}`, traits: { email: `${userId}@example.com` } });
    const batch = await queued(importer, () => openAt('/v1/batch', basic, { batch: [identify('seg-1'), identify('seg-2')] }));
    batch.finish();
    await othersBulkPasses(1);
    expect(batch.answered, "the importer's batch, while its bulk request runs").to.equal(false);
    first.finish();
    await expectQueued(first, 3);
    await expectQueued(batch, 2);
    expect(await waiting()).to.equal(0);
    single.finish();
    await single.answer;
  });
});
