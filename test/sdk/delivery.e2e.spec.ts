import { expect } from 'chai';
import { BatchFailedError, InvalidItemError, ItemRejectedError, sdkVersion, type ItemResult, type TrackingError } from '@tracking-ingestion/sdk';
import { adminToken, servedApp, type Credentials, type TestApp } from '../support/app.js';
import { outcomeNow, queuedTrackId, sdkClient, storedTimes, storedTrackIds } from '../support/sdk.js';
import { TestProxy } from '../support/sdk-proxy.js';

/** The SDK against the real service, through a proxy that records what it sends. */
describe('SDK delivery (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started), { projections: true });
  beforeEach(async () => {
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(() => proxy.stop());

  const bulkPath = (kind: string) => `/v1/accounts/${account.licenseCode}/${kind}/bulk`;

  it('stores an item of every kind once, each visible in the read models and the track lookup', async () => {
    const client = sdkClient(proxy.baseUrl, account);
    // Default options: the flush timer sends them.
    const results = await Promise.all([
      client.identify({ userId: 'u-1', firstName: 'Ann', attributes: { plan: 'gold' } }),
      client.track({ userId: 'u-1', eventName: 'signup', eventData: { source: 'ads' } }),
      client.product({ productId: 'p-1', properties: { price: 12 } }),
      client.productEvent({ productId: 'p-1', userId: null, eventName: 'view', eventData: {} }),
    ]);
    const trackIds = results.map(queuedTrackId);
    expect(proxy.seen.map((request) => request.path)).to.have.members(['users', 'events', 'products', 'productsevents'].map(bulkPath));
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1, 1]);
    await app.projected();
    const lead = await app.get<Record<string, unknown>>(`/admin/v1/accounts/${account.licenseCode}/leads/u-1`, `Bearer ${adminToken}`);
    expect(lead.body).to.include({ userId: 'u-1', firstName: 'Ann' });
    for (const trackId of trackIds) {
      const lookup = await app.get<{ events: unknown[] }>(`/admin/v1/accounts/${account.licenseCode}/track/${trackId}`, `Bearer ${adminToken}`);
      expect(lookup.status, trackId).to.equal(200);
      expect(lookup.body.events).to.have.length(1);
    }
    await client.close();
  });

  it('sends each batch with the bearer token, JSON, its own Idempotency-Key and a User-Agent naming the SDK', async () => {
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 1 });
    await Promise.all([client.track({ userId: 'u-1', eventName: 'a' }), client.track({ userId: 'u-1', eventName: 'b' })]);
    expect(proxy.seen).to.have.length(2);
    for (const { headers, method } of proxy.seen) {
      expect(method).to.equal('POST');
      expect(headers).to.include({ authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' });
      expect(headers['user-agent']).to.match(new RegExp(`^tracking-ingestion-sdk/${sdkVersion.replaceAll('.', '\\.')} node/v\\d+`));
    }
    const keys = proxy.seen.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).to.be.a('string').and.not.equal(keys[1]);
  });

  it('resolves a refused element with its error at once, never sending it again, and stores the others', async () => {
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, onError: (error) => errors.push(error) });
    const results = [
      client.identify({ userId: 'u-1', attributes: {} }),
      client.send('users', { userId: 'u-2' }),
      client.identify({ userId: 'u-3', attributes: {} }),
    ];
    await client.flush();
    const [first, refused, third] = await Promise.all(results);
    expect(refused).to.have.property('status', 'error');
    expect((refused as { message: string }).message).to.contain('attributes');
    expect(await storedTimes(app, [queuedTrackId(first as ItemResult), queuedTrackId(third as ItemResult)])).to.deep.equal([1, 1]);
    expect(proxy.seen).to.have.length(1);
    expect(client.stats()).to.deep.equal({ queued: 0, inFlight: 0, sent: 2, failed: 1, retried: 0 });
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(ItemRejectedError).and.include({ kind: 'users', message: (refused as { message: string }).message });
  });

  it('resolves every item of a batch refused whole with the status and the service message, without a retry', async () => {
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, { ...account, accessToken: 'not-the-token' }, { flushIntervalMs: 0, onError: (error) => errors.push(error) });
    const results = [client.track({ userId: 'u-1', eventName: 'a' }), client.track({ userId: 'u-1', eventName: 'b' })];
    await client.flush();
    for (const result of await Promise.all(results)) {
      expect(result.status).to.equal('error');
      expect((result as { message: string }).message).to.match(/^events batch refused by the service: HTTP 401: \S/);
    }
    expect(proxy.seen).to.have.length(1);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(BatchFailedError).and.include({ kind: 'events', itemCount: 2, status: 401, attempts: 1 });
    expect(client.stats()).to.include({ sent: 0, failed: 2, retried: 0 });
  });

  it('does not follow a redirect: the batch is refused, naming the status, and the token goes nowhere else', async () => {
    proxy.plan = (request) => ({ kind: 'answer', status: 308, headers: { location: `${app.baseUrl}${request.path}` }, body: { error: 'moved', code: 308 } });
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0 });
    const result = client.track({ userId: 'u-1', eventName: 'a' });
    await client.flush();
    expect(await result).to.deep.equal({ status: 'error', message: 'events batch refused by the service: HTTP 308: moved' });
    expect(proxy.seen).to.have.length(1);
    expect(await app.events()).to.have.length(0);
  });

  it('cuts batches of flushAt items in enqueue order, and the service stores a kind in that order', async () => {
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 100, flushIntervalMs: 0 });
    const results = Array.from({ length: 250 }, (_, i) => client.track({ userId: 'u-1', eventName: `e-${i}` }));
    // 200 are on their way already: the last 50 wait for flush().
    expect(client.stats()).to.include({ queued: 150, inFlight: 100 });
    await client.flush();
    expect(proxy.bodies().map((body) => body.length)).to.deep.equal([100, 100, 50]);
    const sentNames = proxy.bodies().flatMap((body) => body.map((event) => (event as { eventName: string }).eventName));
    expect(sentNames).to.deep.equal(Array.from({ length: 250 }, (_, i) => `e-${i}`));
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(await storedTrackIds(app)).to.deep.equal(trackIds);
  });

  it('cuts a batch before the item that would take its body past maxBatchBytes', async () => {
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, maxBatchBytes: 1_000, gzipAboveBytes: Infinity });
    const results = Array.from({ length: 10 }, (_, i) => client.track({ userId: 'u-1', eventName: `e-${i}`, eventData: { text: 'x'.repeat(250) } }));
    await client.flush();
    expect(proxy.bodies().map((body) => body.length)).to.deep.equal([3, 3, 3, 1]);
    for (const request of proxy.seen) expect(request.sentBytes).to.be.at.most(1_000);
    expect(await storedTimes(app, (await Promise.all(results)).map(queuedTrackId))).to.deep.equal(Array(10).fill(1));
  });

  it('gzips bodies above gzipAboveBytes, and the service takes them', async () => {
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, gzipAboveBytes: 1_024 });
    const small = client.product({ productId: 'p-1' });
    const large = Array.from({ length: 20 }, (_, i) => client.track({ userId: 'u-1', eventName: `e-${i}`, eventData: { text: 'lorem ipsum '.repeat(10) } }));
    await client.flush();
    const encodings = Object.fromEntries(proxy.seen.map((request) => [request.path, request.headers['content-encoding'] ?? null]));
    expect(encodings).to.deep.equal({ [bulkPath('products')]: null, [bulkPath('events')]: 'gzip' });
    const gzipped = proxy.seen.find((request) => request.headers['content-encoding'] === 'gzip');
    expect(gzipped?.sentBytes).to.be.below(JSON.stringify(gzipped?.json).length);
    expect(await storedTimes(app, (await Promise.all([small, ...large])).map(queuedTrackId))).to.deep.equal(Array(21).fill(1));
  });

  it('rejects at once an item that could never be sent, and sends the rest of its batch', async () => {
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, maxBatchBytes: 2_000, onError: (error) => errors.push(error) });
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 64; level += 1) deep = { deeper: deep };
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const refused = [
      client.track({ userId: 'u-1', eventName: 'big', eventData: { text: 'x'.repeat(2_000) } }),
      client.track({ userId: 'u-1', eventName: 'deep', eventData: deep }),
      client.track({ userId: 'u-1', eventName: 'cyclic', eventData: cyclic }),
      client.track({ userId: 'u-1', eventName: 'bigint', eventData: { n: 1n } }),
      client.track({ userId: 'u-1', eventName: 'many values', eventData: { n: Array<number>(10_000).fill(0) } }),
      client.track({ userId: 'u-1', eventName: 'many arrays', eventData: { a: Array<unknown[]>(1_000).fill([]) } }),
    ];
    const fine = client.track({ userId: 'u-1', eventName: 'fine', eventData: { text: 'x'.repeat(1_900) } });
    const outcomes = await Promise.all(refused.map(outcomeNow));
    const messages = outcomes.map((outcome) => {
      expect(outcome.state).to.equal('rejected');
      const error = (outcome as { error: unknown }).error;
      expect(error).to.be.instanceOf(InvalidItemError);
      return (error as Error).message;
    });
    expect(messages[0]).to.match(/^events item is 20\d\d bytes of JSON: more than a bulk body may be \(maxBatchBytes 2000\)$/);
    expect(messages[1]).to.equal('events item nests objects and arrays 66 levels deep: the service takes at most 64');
    expect(messages[2]).to.match(/^events item is not JSON-serialisable: .*circular/i);
    expect(messages[3]).to.match(/^events item is not JSON-serialisable: .*BigInt/);
    // The item limits of the service (docs/decisions.md, Limits), keys counted: it would refuse the whole batch.
    expect(messages[4]).to.equal('events item holds 10009 values (object keys included): the service takes at most 10000');
    expect(messages[5]).to.equal('events item holds 1003 objects and arrays: the service takes at most 1000');
    expect(errors.map((error) => error.message)).to.deep.equal(messages);
    await client.flush();
    expect(await storedTimes(app, [queuedTrackId(await fine)])).to.deep.equal([1]);
    expect(client.stats()).to.deep.equal({ queued: 0, inFlight: 0, sent: 1, failed: 0, retried: 0 });
  });

  it('with an idempotencyKey derived from the items, sending the same items again stores nothing new', async () => {
    const key = ({ kind, items }: { kind: string; items: readonly Record<string, unknown>[] }) => `${kind}:${items.map((item) => item.eventName).join(',')}`;
    const send = async () => {
      const client = sdkClient(proxy.baseUrl, account, { flushIntervalMs: 0, idempotencyKey: key });
      const results = ['a', 'b'].map((eventName) => client.track({ userId: 'u-1', eventName }));
      await client.close();
      return (await Promise.all(results)).map(queuedTrackId);
    };
    const first = await send();
    const again = await send();
    expect(again).to.deep.equal(first);
    expect(proxy.seen.map((request) => request.headers['idempotency-key'])).to.deep.equal(['events:a,b', 'events:a,b']);
    expect(await storedTimes(app, first)).to.deep.equal([1, 1]);
  });
});
