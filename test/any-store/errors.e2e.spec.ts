import { expect } from 'chai';
import { eventStoreUnderTest, TestApp, type Credentials } from '../support/app.js';
import { capturedLog, type LogLine } from '../support/log-lines.js';

describe('unexpected errors and logs (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let lines: LogLine[];
  let written: () => string;

  beforeEach(async () => {
    const capture = capturedLog('debug');
    ({ lines, written } = capture);
    app = await TestApp.start({}, { log: capture.log });
    account = await app.account();
  });
  afterEach(() => app.stop());

  it('answers 500 form A without internals when the database does not match the service, and logs it without credentials', async function () {
    // The events table is the Postgres event store's.
    if (eventStoreUnderTest !== 'postgres') this.skip();
    await app.pool.query('ALTER TABLE events RENAME TO events_elsewhere');
    const reply = await app.ingest(account, 'events', { userId: 'u1', eventName: 'x' });
    expect(reply.status).to.equal(500);
    expect(reply.body).to.deep.equal({ error: 'internal error', code: 500 });

    const error = lines.find((entry) => entry.msg === 'unexpected error');
    expect(error?.err).to.have.property('message').that.matches(/events/);
    // The line carries the id the reply gave the client, to find it from a complaint.
    expect(error?.requestId).to.equal(reply.headers.get('x-request-id'));
    const everything = written();
    expect(everything).not.to.contain(account.accessToken);
    expect(everything).not.to.contain(account.licenseCode);
  });

  it('logs no credentials for rejected, unauthorized and accepted requests', async () => {
    await app.ingest(account, 'users', { userId: 'u1', attributes: { a: 1 } });
    await app.ingest(account, 'users', { userId: 'u1', attributes: { a: 'x' } });
    await app.ingest(account, 'events', { userId: 'u1', eventName: 'x' }, { authorization: 'Bearer not-the-token' });
    await app.request('POST', '/admin/v1/accounts', { name: 'logged' }, { authorization: 'Bearer test-admin-token' });
    const everything = written();
    expect(lines.length).to.be.greaterThan(0);
    expect(everything).not.to.contain(account.accessToken);
    expect(everything).not.to.contain(account.licenseCode);
    expect(everything).not.to.contain('test-admin-token');
    expect(everything).not.to.contain('not-the-token');
  });

  it('counts request-level rejections and latencies in /metrics, and logs one access line per request', async () => {
    await app.ingest(account, 'events', { userId: 'u1', eventName: 'ok' });
    await app.ingest(account, 'events', { userId: 'u1', eventName: 'x' }, { authorization: 'Bearer wrong' });
    await app.ingest(account, 'events', {}, { raw: `{"userId":"u1","eventName":"${'x'.repeat(1_100_000)}"}` });
    await app.ingest(account, 'events', { userId: 'u1', eventName: '' });
    const metrics = (await app.request<string>('GET', '/metrics')).body;
    expect(metrics).to.contain('tracking_ingest_rejected_items_total{endpoint="events",reason="unauthorized"} 1');
    expect(metrics).to.contain('tracking_ingest_rejected_items_total{endpoint="events",reason="too_large"} 1');
    expect(metrics).to.contain('tracking_ingest_rejected_items_total{endpoint="events",reason="schema"} 1');
    expect(metrics).to.contain('tracking_ingest_accepted_items_total{endpoint="events"} 1');
    expect(metrics).to.match(/tracking_http_request_duration_seconds_count\{method="POST",route="\/v1\/accounts\/:license\/events"\} 4/);
    expect(metrics).to.match(/tracking_eventstore_append_batch_events_count [1-9]/);

    const access = lines.filter((e) => e.msg === 'request');
    expect(access.filter((e) => e.route === '/v1/accounts/:license/events').map((e) => e.status)).to.deep.equal([200, 401, 413, 400]);
    expect(written()).not.to.contain(account.licenseCode);
  });
});
