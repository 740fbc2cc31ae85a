import { expect } from 'chai';
import { QueueFullError, TrackingClosedError, type TrackingError } from '@tracking-ingestion/sdk';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { until } from '../support/eventually.js';
import { gate, outcomeNow, queuedTrackId, sdkClient, storedTimes } from '../support/sdk.js';
import { TestProxy } from '../support/sdk-proxy.js';

/** The SDK's bounded queue, flush() and close(), against the real service behind a proxy that can hold requests. */
describe('SDK queue, flush and close (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started));
  beforeEach(async () => {
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(() => proxy.stop());

  const event = (eventName: string) => ({ userId: 'u-1', eventName });

  it('rejects a call at once with QueueFullError while maxQueueSize items are queued or in flight', async () => {
    const held = gate();
    proxy.plan = () => ({ kind: 'hold', until: held.until });
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 1, maxQueueSize: 3, onError: (error) => errors.push(error) });
    const accepted = ['a', 'b', 'c'].map((name) => client.track(event(name)));
    await until(() => proxy.seen.length === 1, 10_000, () => `the first batch at the proxy: ${proxy.seen.length} requests seen`);
    expect(client.stats()).to.deep.equal({ queued: 2, inFlight: 1, sent: 0, failed: 0, retried: 0 });

    const outcome = await outcomeNow(client.track(event('d')));
    expect(outcome.state).to.equal('rejected');
    const error = (outcome as { error: Error }).error;
    expect(error).to.be.instanceOf(QueueFullError);
    expect(error.message).to.equal('queue full: 3 items, 96 bytes queued or in flight (maxQueueSize 3, maxQueueBytes 33554432); the events item was not queued');
    expect(errors).to.deep.equal([error]);

    held.open();
    const trackIds = (await Promise.all(accepted)).map(queuedTrackId);
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1]);
    // Room again once delivered.
    queuedTrackId(await client.track(event('e')));
    await client.close();
  });

  it('rejects a call at once with QueueFullError while maxQueueBytes bytes are queued or in flight', async () => {
    const held = gate();
    proxy.plan = () => ({ kind: 'hold', until: held.until });
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 1, maxQueueBytes: 510 });
    const payload = { text: 'x'.repeat(180) };
    const accepted = ['a', 'b'].map((name) => client.track({ ...event(name), eventData: payload }));
    const outcome = await outcomeNow(client.track({ ...event('c'), eventData: payload }));
    expect((outcome as { error: unknown }).error).to.be.instanceOf(QueueFullError);
    // 472 bytes are held: a small one (32 bytes) still fits.
    const small = client.track(event('d'));
    held.open();
    const trackIds = (await Promise.all([...accepted, small])).map(queuedTrackId);
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1]);
  });

  it('flush() settles only after the reply to a batch already in flight', async () => {
    const held = gate();
    proxy.plan = (_request, index) => (index === 0 ? { kind: 'hold', until: held.until } : { kind: 'forward' });
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 1 });
    const result = client.track(event('a'));
    await until(() => proxy.seen.length === 1, 10_000, () => `the batch at the proxy: ${proxy.seen.length} requests seen`);
    let flushed = false;
    const flush = client.flush().then(() => (flushed = true));
    // However long the proxy holds the request, flush() waits for its reply.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(flushed).to.equal(false);
    expect(client.stats()).to.include({ inFlight: 1, sent: 0 });
    held.open();
    await flush;
    const settled = await outcomeNow(result);
    expect(settled.state, 'the item has its result when flush() settles').to.equal('resolved');
    expect(await storedTimes(app, [queuedTrackId(await result)])).to.deep.equal([1]);
  });

  it('close() delivers what is queued; later calls reject with TrackingClosedError', async () => {
    const errors: TrackingError[] = [];
    const client = sdkClient(proxy.baseUrl, account, { flushAt: 100, flushIntervalMs: 0, onError: (error) => errors.push(error) });
    const results = ['a', 'b', 'c'].map((name) => client.track(event(name)));
    expect(client.stats()).to.include({ queued: 3 });
    const closing = client.close();
    const late = await outcomeNow(client.identify({ userId: 'u-1', attributes: {} }));
    await closing;
    expect(await client.close().then(() => 'closed')).to.equal('closed');
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(await storedTimes(app, trackIds)).to.deep.equal([1, 1, 1]);
    expect(proxy.seen).to.have.length(1);
    expect(late.state).to.equal('rejected');
    expect((late as { error: unknown }).error).to.be.instanceOf(TrackingClosedError);
    const after = await outcomeNow(client.track(event('d')));
    expect((after as { error: unknown }).error).to.be.instanceOf(TrackingClosedError);
    expect(errors.map((error) => error.name)).to.deep.equal(['TrackingClosedError', 'TrackingClosedError']);
  });
});
