import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { servedApp, TestApp, type Credentials } from './support/app.js';
import { itemError, queued, requestError, storesNothing } from './support/replies.js';

describe('robustness: odd input and a hung store (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { config: { queryTimeoutMs: 800 } });

  it('rejects numbers JSON can carry but a double cannot (1e400), at any depth, naming the field', async () => {
    const top = await storesNothing(app, () => app.ingest(account, 'events', {}, { raw: '{"userId":"u1","eventName":"x","eventData":{"n":1e400}}' }));
    expect(itemError(top)).to.equal('eventData.n must be a finite number');
    const nested = await storesNothing(app, () =>
      app.ingest(account, 'products', {}, { raw: '{"productId":"p1","properties":{"sizes":[1,-1e999]}}' }),
    );
    expect(itemError(nested)).to.equal('properties.sizes[1] must be a finite number');
    queued(await app.ingest(account, 'events', {}, { raw: '{"userId":"u1","eventName":"x","eventData":{"n":1.5e-300}}' }));
  });

  it('rejects date-times before year 1, which no timestamp column can hold', async () => {
    for (const birth_date of ['0000-01-01T00:00:00Z', '0001-01-01T00:30:00+0100']) {
      const reply = await storesNothing(app, () => app.ingest(account, 'users', { userId: 'u1', birth_date, attributes: {} }));
      expect(itemError(reply)).to.match(/^birth_date must be an ISO 8601 date-time/);
    }
    queued(await app.ingest(account, 'users', { userId: 'u1', birth_date: '0001-01-01T00:30:00-0100', attributes: {} }));
  });

  it('answers license segments that cannot be a license code with 401, a NUL in one and undecodable paths with 400, never 500', async () => {
    for (const segment of ['not-a-license', `${account.licenseCode}x`]) {
      const reply = await app.request('POST', `/v1/accounts/${segment}/events`, { userId: 'u1', eventName: 'x' }, { authorization: `Bearer ${account.accessToken}` });
      requestError(reply, 401);
    }
    const withNul = await app.request('POST', '/v1/accounts/%00/events', { userId: 'u1', eventName: 'x' }, { authorization: `Bearer ${account.accessToken}` });
    expect(requestError(withNul, 400)).to.equal('path parameter license contains a NUL character or an unpaired surrogate, which the service cannot take');
    const undecodable = await app.request('POST', '/v1/accounts/%FF/events', { userId: 'u1', eventName: 'x' }, { authorization: `Bearer ${account.accessToken}` });
    expect(requestError(undecodable, 400)).not.to.contain('%FF');
  });

  it('reads gzip bodies, and answers a corrupt compressed body with 400 form A', async () => {
    const body = gzipSync(JSON.stringify({ userId: 'u1', eventName: 'zipped' }));
    const zipped = await fetch(`${app.baseUrl}/v1/accounts/${account.licenseCode}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(zipped.status).to.equal(200);
    const corrupt = await fetch(`${app.baseUrl}/v1/accounts/${account.licenseCode}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Buffer.from('this is not gzip'),
    });
    expect(corrupt.status).to.equal(400);
    expect(await corrupt.json()).to.deep.equal({ error: 'body is not valid gzip data (Content-Encoding: gzip): incorrect header check', code: 400 });
  });

  it('answers 503 when the database stops answering, and recovers when it answers again', async () => {
    queued(await app.ingest(account, 'events', { userId: 'u1', eventName: 'before' }));
    const blocker = await app.pool.connect();
    try {
      // Another session holds the table: appends wait, as they would on a hung server.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const reply = await app.ingest(account, 'events', { userId: 'u1', eventName: 'during' });
      requestError(reply, 503);
      expect(Date.now() - started).to.be.below(5_000);
      await blocker.query('ROLLBACK');
    } finally {
      blocker.release();
    }
    queued(await app.ingest(account, 'events', { userId: 'u1', eventName: 'after' }));
    // The server cancelled the waiting append: nothing of it was stored late.
    expect((await app.events()).map((e) => e.data.eventName)).to.deep.equal(['before', 'after']);
  });
});
