import { expect } from 'chai';
import { adminToken, servedApp, TestApp, type Credentials } from '../support/app.js';
import { bulkResults, itemError, queued, requestError, storesNothing } from '../support/replies.js';

const event = { userId: 'u-1', eventName: 'Viewed' };

describe('protocol: authentication (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;

  before(async () => {
    app = await TestApp.start();
    account = await app.account();
    other = await app.account('other');
  });
  after(() => app.stop());

  it('accepts the bare token and the Bearer form in any case', async () => {
    for (const authorization of [account.accessToken, `Bearer ${account.accessToken}`, `bearer ${account.accessToken}`, `BEARER ${account.accessToken}`]) {
      queued(await app.ingest(account, 'events', event, { authorization }));
    }
  });

  const refusals: [string, () => [Credentials, string | null]][] = [
    ['a missing Authorization header', () => [account, null]],
    ['a wrong token', () => [account, 'Bearer trk_not-the-token']],
    ['an unknown license code', () => [{ ...account, licenseCode: 'no-such-license' }, `Bearer ${account.accessToken}`]],
    ["another account's token", () => [account, `Bearer ${other.accessToken}`]],
  ];
  for (const [label, credentials] of refusals) {
    it(`answers ${label} with 401 form A and stores nothing`, async () => {
      const [target, authorization] = credentials();
      await storesNothing(app, async () => requestError(await app.ingest(target, 'events', event, { authorization }), 401));
    });
  }
});

describe('protocol: the admin API (e2e)', () => {
  let app: TestApp;

  before(async () => {
    app = await TestApp.start();
  });
  after(() => app.stop());

  const createAccount = (authorization: string | null) => app.request('POST', '/admin/v1/accounts', { name: 'Beta' }, { authorization });

  it('refuses to create an account without the admin token or with a wrong one (401 form A)', async () => {
    requestError(await createAccount(null), 401);
    requestError(await createAccount('Bearer not-the-admin-token'), 401);
    const { rows } = await app.pool.query('SELECT id FROM accounts');
    expect(rows).to.have.length(0);
  });

  it('creates an account whose token works for ingest, storing only a hash of the token', async () => {
    const reply = await createAccount(`Bearer ${adminToken}`);
    expect(reply.status).to.equal(201);
    const created = reply.body as { licenseCode: string; accessToken: string; name: string };
    expect(created).to.have.all.keys('licenseCode', 'accessToken', 'name');
    expect(created.name).to.equal('Beta');
    queued(await app.ingest(created, 'events', event));

    const { rows } = await app.pool.query<{ token_hash: Buffer }>(
      'SELECT t.* FROM access_tokens t JOIN accounts a ON a.id = t.account_id WHERE a.license_code = $1',
      [created.licenseCode],
    );
    expect(rows).to.have.length(1);
    const hash = rows[0]?.token_hash as Buffer;
    expect(hash).to.have.length(32);
    expect(hash.equals(Buffer.from(created.accessToken))).to.equal(false);
    expect(JSON.stringify(rows)).not.to.contain(created.accessToken);
    expect(hash.toString('latin1')).not.to.contain(created.accessToken);
  });
});

describe('protocol: request-level errors and body limits (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { scope: 'suite' });

  it('answers malformed JSON with 400 form A', async () => {
    await storesNothing(app, async () => requestError(await app.ingest(account, 'events', undefined, { raw: '{"userId": "u-1", ' }), 400));
  });

  it('answers a Content-Type other than JSON or text/plain with 415 form A naming both', async () => {
    const reply = await storesNothing(app, () => app.ingest(account, 'events', event, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
    expect(requestError(reply, 415)).to.equal('Content-Type must be application/json or text/plain (holding JSON)');
  });

  it('takes a text/plain body holding JSON, as a page sends it without a preflight (docs/browser.md)', async () => {
    queued(await app.ingest(account, 'events', event, { headers: { 'content-type': 'text/plain;charset=UTF-8' } }));
    requestError(await app.ingest(account, 'events', undefined, { raw: 'userId=u-1', headers: { 'content-type': 'text/plain' } }), 400);
  });

  it('answers an unknown path with 404 form A JSON', async () => {
    requestError(await app.ingest(account, 'orders', event), 404);
    requestError(await app.request('GET', '/nothing/here'), 404);
    requestError(await app.request('POST', '/v2/accounts/x/users', { userId: 'u-1', attributes: {} }), 404);
  });

  for (const endpoint of ['users', 'events', 'products', 'productsevents']) {
    it(`answers a JSON array body on ${endpoint} with 400 form A`, async () => {
      await storesNothing(app, async () => requestError(await app.ingest(account, endpoint, [{ userId: 'u-1', attributes: {} }]), 400));
    });
  }

  it('accepts an event body just under 1 MiB and answers one over 1 MiB with 413 form A', async () => {
    queued(await app.ingest(account, 'events', { ...event, eventData: { blob: 'x'.repeat(1_000_000) } }));
    await storesNothing(app, async () =>
      requestError(await app.ingest(account, 'events', { ...event, eventData: { blob: 'x'.repeat(1_100_000) } }), 413),
    );
  });

  const bigUsers = (bytesEach: number) =>
    Array.from({ length: 100 }, (_, i) => ({ userId: `big-${i}`, attributes: { bio: 'y'.repeat(bytesEach) } }));

  it('accepts a users bulk of about 2 MiB', async () => {
    const body = bigUsers(21_000);
    expect(JSON.stringify(body).length).to.be.greaterThan(2 * 1024 * 1024);
    const results = bulkResults(await app.ingest(account, 'users/bulk', body));
    expect(results.filter((r) => r.status === 'queued')).to.have.length(100);
  });

  it('answers a users bulk over 5 MiB with 413 form A', async () => {
    const body = bigUsers(55_000);
    expect(JSON.stringify(body).length).to.be.greaterThan(5 * 1024 * 1024);
    await storesNothing(app, async () => requestError(await app.ingest(account, 'users/bulk', body), 413));
  });

  it('rejects strings the store cannot hold (U+0000, lone surrogates) naming the field, storing nothing', async () => {
    const nul = await storesNothing(app, () => app.ingest(account, 'events', { ...event, eventName: 'nul\u0000byte' }));
    expect(itemError(nul)).to.equal('eventName contains a NUL character or an unpaired surrogate, which cannot be stored');
    const surrogate = await storesNothing(app, () =>
      app.ingest(account, 'users', { userId: 'u1', attributes: { note: 'half \ud800 pair' } }),
    );
    expect(itemError(surrogate)).to.contain('attributes.note');
    const nestedKey = await storesNothing(app, () => app.ingest(account, 'events', { ...event, eventData: { list: [{ 'k\u0000': 1 }] } }));
    expect(itemError(nestedKey)).to.contain('eventData.list[0].k');
  });
});

describe('protocol: health and metrics (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { scope: 'suite' });

  it('answers GET /healthz with 200 {status: ok}', async () => {
    const reply = await app.request('GET', '/healthz');
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ status: 'ok' });
  });

  it('exposes request and rejection counters by endpoint, never the license code or token', async () => {
    queued(await app.ingest(account, 'events', event));
    itemError(await app.ingest(account, 'events', { eventName: 'no user' }));
    requestError(await app.ingest(account, 'no-such-endpoint', event), 404);
    requestError(await app.ingest({ ...account, licenseCode: 'leaky-license-42' }, 'events', event), 401);

    const reply = await app.request<string>('GET', '/metrics');
    expect(reply.status).to.equal(200);
    expect(reply.body).to.be.a('string');
    const text = reply.body;
    expect(text).to.match(/^tracking_http_requests_total\{[^}]*route="\/v1\/accounts\/:license\/events"[^}]*status="200"[^}]*\} [1-9]/m);
    expect(text).to.match(/^tracking_http_requests_total\{[^}]*route="\/v1\/accounts\/:license\/events"[^}]*status="400"[^}]*\} [1-9]/m);
    expect(text).to.match(/^tracking_ingest_rejected_items_total\{[^}]*endpoint="events"[^}]*\} [1-9]/m);
    for (const secret of [account.licenseCode, account.accessToken, 'leaky-license-42']) expect(text).not.to.contain(secret);
  });
});
