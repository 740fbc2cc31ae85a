import { expect } from 'chai';
import { BatchFailedError, type TrackingError } from '@tracking-ingestion/sdk';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { until } from '../support/eventually.js';
import { queuedTrackId, sdkClient, storedTimes } from '../support/sdk.js';
import { TestProxy } from '../support/sdk-proxy.js';

const unavailable = { kind: 'answer', status: 503, headers: { 'retry-after': '0' }, body: { error: 'store unavailable', code: 503 } } as const;

/** Lost replies, timeouts, outages and rate limits between the SDK and the real service. */
describe('SDK retries (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started));
  beforeEach(async () => {
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(() => proxy.stop());

  const events = (count: number, prefix = 'e') => Array.from({ length: count }, (_, i) => ({ userId: 'u-1', eventName: `${prefix}-${i}` }));

  it('retries a batch whose reply was lost, under the same Idempotency-Key, and the service stores each item once', async () => {
    proxy.plan = (_request, index) => (index === 0 ? { kind: 'lose-reply' } : { kind: 'forward' });
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0 });
    const results = events(5).map((event) => client.track(event));
    await client.flush();
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(proxy.seen).to.have.length(2);
    const [first, retry] = proxy.seen.map((request) => request.headers['idempotency-key']);
    expect(retry).to.be.a('string').and.equal(first);
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1, 1, 1]);
    expect(client.stats()).to.deep.equal({ queued: 0, inFlight: 0, sent: 5, failed: 0, retried: 1 });
  });

  it('retries a batch whose reply came after requestTimeoutMs, and the service stores each item once', async () => {
    proxy.plan = (_request, index) => (index === 0 ? { kind: 'late-reply', delayMs: 1_000 } : { kind: 'forward' });
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, requestTimeoutMs: 200 });
    const results = events(3).map((event) => client.track(event));
    await client.flush();
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(proxy.seen).to.have.length(2);
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1]);
  });

  it('rides through 503 replies and refused connections, then delivers everything once', async () => {
    proxy.plan = (_request, index) => (index < 3 ? unavailable : { kind: 'forward' });
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0 });
    const answered503 = events(4, 'a').map((event) => client.track(event));
    await client.flush();
    expect(proxy.seen).to.have.length(4);

    await proxy.down();
    const refused = events(4, 'b').map((event) => client.track(event));
    void client.flush();
    await until(() => client.stats().retried >= 5, 10_000, () => `two retries of a refused connection: ${JSON.stringify(client.stats())}`);
    await proxy.up();
    await client.flush();
    const trackIds = (await Promise.all([...answered503, ...refused])).map(queuedTrackId);
    expect(await storedTimes(app, trackIds)).to.deep.equal(Array(8).fill(1));
    expect(client.stats()).to.include({ sent: 8, failed: 0 });
  });

  it('waits as long as the Retry-After of a 429 says, in seconds or as an HTTP date', async () => {
    const retryAt = new Date(Date.now() + 2_000).toUTCString();
    proxy.plan = (_request, index) => {
      const retryAfter = [String(1), retryAt][index];
      return retryAfter === undefined ? { kind: 'forward' } : { kind: 'answer', status: 429, headers: { 'retry-after': retryAfter }, body: { error: 'rate limit', code: 429 } };
    };
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0 });
    const result = client.productEvent({ productId: 'p-1', userId: null, eventName: 'view' });
    await client.flush();
    queuedTrackId(await result);
    const [first, second, third] = proxy.seen.map((request) => request.at) as [number, number, number];
    expect(proxy.seen).to.have.length(3);
    // The proxy's clock: the second request at least 1 s after the first was answered, the third not before the date.
    expect(second - first).to.be.at.least(990);
    expect(third).to.be.at.least(Date.parse(retryAt) - 10);
  });

  it('gives up after retryForMs: every item resolves with the last error, reported once', async () => {
    proxy.plan = () => unavailable;
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, retryForMs: 1_000, onError: (error) => errors.push(error) });
    const results = events(2).map((event) => client.track(event));
    await client.flush();
    for (const result of await Promise.all(results)) {
      expect(result.status).to.equal('error');
      expect((result as { message: string }).message, JSON.stringify(result)).to.match(/^events batch not delivered within retryForMs after \d+ attempts over 1 s: HTTP 503: store unavailable$/);
    }
    const attempts = proxy.seen.length;
    expect(attempts).to.be.at.least(2);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(BatchFailedError).and.include({ kind: 'events', itemCount: 2, status: 503, attempts });
    expect(client.stats()).to.deep.equal({ queued: 0, inFlight: 0, sent: 0, failed: 2, retried: attempts - 1 });
  });

  it('with default options, rides through a 30-second outage of the service without failing an item', async function () {
    this.timeout(90_000);
    await proxy.down();
    const outageStart = Date.now();
    const client = sdkClient(proxy.baseUrl, account);
    const results = [
      ...events(30).map((event) => client.track(event)),
      client.identify({ userId: 'u-1', attributes: {} }),
      client.product({ productId: 'p-1' }),
      client.productEvent({ productId: 'p-1', userId: 'u-1', eventName: 'view' }),
    ];
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const held = client.stats();
    expect(held).to.include({ sent: 0, failed: 0 });
    expect(held.queued + held.inFlight).to.equal(33);
    await proxy.up();
    await client.close();
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(await storedTimes(app, trackIds)).to.deep.equal(Array(33).fill(1));
    expect(Date.now() - outageStart).to.be.at.least(30_000);
  });
});
