import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { allowConnections } from './support/event-stores.js';
import { eventually, sleep } from './support/eventually.js';
import { capturedLog } from './support/log-lines.js';
import { queued, uuidPattern } from './support/replies.js';

/**
 * Browser keys and the CORS of the ingest API over HTTP (docs/browser.md): what a page's requests
 * get, header by header. test/browser-*.e2e.spec.ts show the same in a real browser.
 */

const admin = `Bearer ${adminToken}`;
const site = 'https://shop.example.com';
const event = { anonymousId: 'visitor-1', eventName: 'page_view' };
/**
 * The limits count in one-minute windows of the clock (src/http/browser-limits.ts): a test of a
 * limit starts early in one, so that no window ends in its middle and starts the counts afresh.
 */
async function earlyInAWindow(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 45_000) await sleep(60_000 - into + 50);
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

interface CreatedKey {
  id: string;
  label: string;
  origins: string[];
  browserKey: string;
}

interface Warning {
  reason: string;
  status: number;
  message: string;
  excerpt: string | null;
}

describe('browser keys and CORS (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    app = await TestApp.start({ browserAddressPerMinute: 5 });
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  const keysPath = (target = account): string => `/admin/v1/accounts/${target.licenseCode}/browser-keys`;
  const makeKey = async (origins: string[], target = account): Promise<CreatedKey> => {
    const reply = await app.request<CreatedKey>('POST', keysPath(target), { label: 'shop', origins }, { authorization: admin });
    expect(reply.status, show(reply)).to.equal(201);
    return reply.body;
  };
  /** A POST as a page sends it: the key in the query string, a text/plain body, the page's Origin. */
  const fromPage = (key: string, origin: string | null, body: unknown = event, endpoint = 'events', query = ''): Promise<Reply> =>
    app.request('POST', `/v1/accounts/${account.licenseCode}/${endpoint}?key=${encodeURIComponent(key)}${query}`, undefined, {
      raw: JSON.stringify(body),
      headers: { 'content-type': 'text/plain;charset=UTF-8', ...(origin === null ? {} : { origin }) },
    });
  const warnings = async (): Promise<Warning[]> => {
    const reply = await app.get<{ warnings: Warning[] }>(`/admin/v1/accounts/${account.licenseCode}/warnings/recent`, admin);
    return reply.body.warnings;
  };

  it('makes a key stored hashed and shown once, which posts from its origins, text/plain, and is refused once revoked', async () => {
    const created = await makeKey(['HTTPS://Shop.Example.com:443/', 'https://*.example.org', 'http://localhost:5173']);
    expect(created.browserKey).to.match(/^tbk_[A-Za-z0-9_-]{32}$/);
    expect(created.id).to.match(uuidPattern);
    expect(created.origins).to.deep.equal([site, 'https://*.example.org', 'http://localhost:5173']);
    const { rows } = await app.pool.query<{ key_hash: Buffer }>('SELECT key_hash FROM browser_keys WHERE id = $1', [created.id]);
    expect(rows[0]?.key_hash.equals(createHash('sha256').update(created.browserKey).digest())).to.equal(true);
    const listed = await app.get<{ browserKeys: Record<string, unknown>[] }>(keysPath(), admin);
    expect(JSON.stringify(listed.body)).not.to.contain(created.browserKey);
    expect(listed.body.browserKeys.map((k) => k.label)).to.deep.equal(['shop']);

    for (const origin of [site, 'https://a.example.org', 'https://a.b.example.org', 'http://localhost:5173']) {
      const reply = await fromPage(created.browserKey, origin);
      queued(reply);
      expect(reply.headers.get('access-control-allow-origin'), origin).to.equal(origin);
    }
    const bearer = await app.ingest(account, 'events', event, { authorization: `Bearer ${created.browserKey}`, headers: { origin: site } });
    queued(bearer);

    expect((await app.request('DELETE', `${keysPath()}/${created.id}`, undefined, { authorization: admin })).status).to.equal(204);
    const refused = await fromPage(created.browserKey, site);
    expect(refused.status, show(refused)).to.equal(401);
    expect(refused.headers.get('access-control-allow-origin')).to.equal(site);
  });

  it('refuses another origin with 403 naming it, readable by the page, and counts it in Warnings without the body', async () => {
    const { browserKey } = await makeKey([site, 'https://*.example.org']);
    for (const origin of ['https://evil.example', 'https://example.org', 'http://shop.example.com', 'https://shop.example.com:8443', 'null']) {
      const reply = await fromPage(browserKey, origin);
      expect(reply.status, `${origin}: ${show(reply)}`).to.equal(403);
      expect(reply.body).to.deep.equal({ error: `origin ${origin} is not allowed for this browser key`, code: 403 });
      expect(reply.headers.get('access-control-allow-origin')).to.equal(origin);
      expect(reply.headers.get('vary')).to.match(/origin/i);
    }
    const noOrigin = await fromPage(browserKey, null);
    expect(noOrigin.status, show(noOrigin)).to.equal(403);
    expect((noOrigin.body as { error: string }).error).to.contain('no Origin header');

    const seen = await eventually(async () => {
      const list = await warnings();
      return list.length >= 6 ? list : undefined;
    }, 5_000, () => 'the refusals in Warnings');
    expect(seen.every((w) => w.reason === 'origin_not_allowed' && w.status === 403 && w.excerpt === null)).to.equal(true, JSON.stringify(seen));
    expect(seen.map((w) => w.message)).to.include('origin https://evil.example is not allowed for this browser key');
  });

  it('refuses a wrong key (401), an access token in the URL (401) or from a page (403), each counted in Warnings', async () => {
    const { browserKey } = await makeKey([site]);
    const wrong = await fromPage(`${browserKey.slice(0, -2)}xx`, site);
    expect(wrong.status, show(wrong)).to.equal(401);
    expect(wrong.headers.get('access-control-allow-origin')).to.equal(site);

    const inUrl = await fromPage(account.accessToken, null);
    expect(inUrl.status, show(inUrl)).to.equal(401);
    expect((inUrl.body as { error: string }).error).to.contain('must never be sent in a URL');

    const fromSite = await app.ingest(account, 'events', event, { headers: { origin: site } });
    expect(fromSite.status, show(fromSite)).to.equal(403);
    expect((fromSite.body as { error: string }).error).to.contain('must not be used from a web page');
    queued(await app.ingest(account, 'events', event));

    const seen = await eventually(async () => {
      const list = await warnings();
      return list.length >= 3 ? list : undefined;
    }, 5_000, () => 'the refusals in Warnings');
    expect(seen.map((w) => [w.reason, w.status]).sort()).to.deep.equal([
      ['access_token_in_page', 403],
      ['secret_in_url', 401],
      ['unauthorized', 401],
    ]);
  });

  it('answers every reply of /v1 with CORS headers: 400, 404, 413, 415, 429 and 503 too', async function () {
    this.timeout(45_000);
    await earlyInAWindow();
    const { browserKey } = await makeKey([site]);
    const exposed = (reply: Reply): string => reply.headers.get('access-control-expose-headers') ?? '';
    const malformed = await app.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${browserKey}`, undefined, {
      raw: '{"eventName":',
      headers: { 'content-type': 'text/plain', origin: site },
    });
    expect(malformed.status, show(malformed)).to.equal(400);
    const unknownPath = await app.request('POST', `/v1/accounts/${account.licenseCode}/nothing`, {}, { headers: { origin: site } });
    expect(unknownPath.status).to.equal(404);
    const tooLarge = await fromPage(browserKey, site, { ...event, eventData: { text: 'x'.repeat(1024 * 1024) } });
    expect(tooLarge.status, show(tooLarge)).to.equal(413);
    const wrongType = await app.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${browserKey}`, undefined, {
      raw: JSON.stringify(event),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site },
    });
    expect(wrongType.status, show(wrongType)).to.equal(415);
    for (const reply of [malformed, unknownPath, tooLarge, wrongType]) {
      expect(reply.headers.get('access-control-allow-origin'), show(reply)).to.equal(site);
      expect(exposed(reply)).to.contain('Retry-After').and.contain('X-Request-Id').and.contain('Idempotent-Replayed');
    }

    // The limit per address is 5 a minute in this app; the first refused request was counted too.
    let limited: Reply | undefined;
    for (let i = 0; i < 6 && !limited; i += 1) {
      const reply = await fromPage(browserKey, site);
      if (reply.status === 429) limited = reply;
    }
    expect(limited, 'a 429 within 6 requests').not.to.equal(undefined);
    expect(limited?.headers.get('access-control-allow-origin')).to.equal(site);
    expect(Number(limited?.headers.get('retry-after'))).to.be.within(1, 60);

    const other = await makeKey([site]);
    await allowConnections(app.database, false);
    try {
      const down = await fromPage(other.browserKey, site);
      expect(down.status, show(down)).to.equal(503);
      expect(down.headers.get('access-control-allow-origin')).to.equal(site);
    } finally {
      await allowConnections(app.database, true);
    }
  });

  it('answers a preflight at once with no database, allowing POST and the headers a page may send, cached 7200 s', async () => {
    await allowConnections(app.database, false);
    try {
      const reply = await app.request('OPTIONS', `/v1/accounts/${account.licenseCode}/events/bulk`, undefined, {
        headers: { origin: site, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
      });
      expect(reply.status).to.equal(204);
      expect(reply.headers.get('access-control-allow-origin')).to.equal(site);
      expect(reply.headers.get('access-control-allow-methods')).to.equal('POST');
      expect(reply.headers.get('access-control-allow-headers')).to.contain('authorization').and.contain('idempotency-key').and.contain('content-type');
      expect(reply.headers.get('access-control-max-age')).to.equal('7200');
      expect(reply.headers.get('vary')).to.match(/origin/i);
      expect(reply.headers.get('access-control-allow-credentials')).to.equal(null);
    } finally {
      await allowConnections(app.database, true);
    }
  });

  it('takes the Idempotency-Key from the query string (a beacon), storing a re-sent batch once', async () => {
    const { browserKey } = await makeKey([site]);
    const batch = [event, { ...event, eventName: 'signed_up' }];
    const first = await fromPage(browserKey, site, batch, 'events/bulk', '&idempotencyKey=batch-1');
    const again = await fromPage(browserKey, site, batch, 'events/bulk', '&idempotencyKey=batch-1');
    expect(first.status, show(first)).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const { rows } = await app.pool.query<{ window_hours: number }>('SELECT window_hours FROM idempotency_keys WHERE key = $1', ['batch-1']);
    expect(rows.map((r) => r.window_hours), 'a browser batch is kept 8 days').to.deep.equal([192]);
    expect((await app.events()).length).to.equal(2);
    const both = await fromPage(browserKey, site, batch, 'events/bulk', '&idempotencyKey=batch-2');
    expect(both.status).to.equal(200);
    // A page's keys are its own: a server using the same key with another body is not refused (422).
    const server = await app.ingest(account, 'events/bulk', [{ userId: 'u-9', eventName: 'server' }], { headers: { 'idempotency-key': 'batch-1' } });
    expect(server.status, show(server)).to.equal(200);
  });

  it('checks what a key is made of: origins, label, at most 20 keys; another account cannot see or change them', async () => {
    const bad = async (body: unknown, expected: string): Promise<void> => {
      const reply = await app.request('POST', keysPath(), body, { authorization: admin });
      expect(reply.status, show(reply)).to.equal(400);
      expect((reply.body as { error: string }).error).to.contain(expected);
    };
    await bad({ label: 'x', origins: [] }, 'origins must be a non-empty array');
    await bad({ label: 'x', origins: ['https://shop.example.com/path'] }, 'no path, query or user');
    await bad({ label: 'x', origins: ['ftp://shop.example.com'] }, 'scheme (http or https)');
    await bad({ label: 'x', origins: ['https://*.com'] }, 'at least two labels');
    await bad({ label: '', origins: [site] }, 'label must be 1 to 100 characters');
    await bad({ label: 'x', origins: [site], scope: 'read' }, 'unknown field "scope"');

    const other = await app.account('Globex');
    const created = await makeKey([site]);
    const otherToken = `Bearer ${other.accessToken}`;
    expect((await app.request('DELETE', `${keysPath()}/${created.id}`, undefined, { authorization: otherToken })).status).to.equal(401);
    expect((await app.request('PATCH', `${keysPath(other)}/${created.id}`, { origins: ['https://evil.example'] }, { authorization: otherToken })).status).to.equal(404);
    const changed = await app.request<CreatedKey>('PATCH', `${keysPath()}/${created.id}`, { origins: ['https://new.example.com'] }, { authorization: admin });
    expect(changed.body.origins).to.deep.equal(['https://new.example.com']);
    expect((await fromPage(created.browserKey, site)).status, 'the old origin, at once in this process').to.equal(403);
    queued(await fromPage(created.browserKey, 'https://new.example.com'));
    // A browser key cannot read or manage anything.
    expect((await app.get(`/admin/v1/accounts/${account.licenseCode}/leads`, `Bearer ${created.browserKey}`)).status).to.equal(401);
    expect((await app.get(keysPath(), `Bearer ${created.browserKey}`)).status).to.equal(401);

    for (let i = 1; i < 20; i += 1) await makeKey([site]);
    const over = await app.request('POST', keysPath(), { label: 'one more', origins: [site] }, { authorization: admin });
    expect(over.status, show(over)).to.equal(409);
  });

  it('never writes a browser key or an access token sent in the URL to the log, even at debug level', async () => {
    const { log, lines, written } = capturedLog('debug');
    const logged = await TestApp.start({}, { database: app.database, log });
    try {
      const { browserKey } = await makeKey([site]);
      const send = (key: string): Promise<Reply> =>
        logged.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${key}&idempotencyKey=k-1`, undefined, {
          raw: JSON.stringify(event),
          headers: { 'content-type': 'text/plain', origin: site },
        });
      queued(await send(browserKey));
      expect((await send(account.accessToken)).status).to.equal(401);
      await eventually(() => lines.filter((line) => line.msg === 'request').length >= 2, 2_000, () => 'the access lines');
      expect(written()).not.to.contain(browserKey).and.not.to.contain(account.accessToken).and.not.to.contain(account.licenseCode);
      expect(lines.filter((line) => line.msg === 'request').map((line) => line.route)).to.deep.equal(['/v1/accounts/:license/events', '/v1/accounts/:license/events']);
    } finally {
      await logged.stop();
    }
  });

  it('shares the limit of a key between processes, refusing in each once it has learned the total', async function () {
    this.timeout(45_000);
    await earlyInAWindow();
    const limitPerKey = { browserAddressPerMinute: 0, browserKeyPerMinute: 4 };
    const [first, second] = [await TestApp.start(limitPerKey, { database: app.database }), await TestApp.start(limitPerKey, { database: app.database })];
    try {
      const { browserKey, id } = await makeKey([site]);
      const post = (via: TestApp): Promise<number> =>
        via
          .request('POST', `/v1/accounts/${account.licenseCode}/events?key=${browserKey}`, undefined, { raw: JSON.stringify(event), headers: { 'content-type': 'text/plain', origin: site } })
          .then((reply) => reply.status);
      const counted = async (): Promise<number> => {
        const { rows } = await app.pool.query<{ points: number }>(`SELECT points FROM rate_limits WHERE key LIKE $1`, [`browserkey:${id}:%`]);
        return rows.reduce((sum, row) => sum + row.points, 0);
      };
      const statuses = [await post(first), await post(first), await post(first), await post(first), await post(first)];
      expect(statuses, 'the first process alone: 4 a minute').to.deep.equal([200, 200, 200, 200, 429]);
      await eventually(async () => (await counted()) === 4, 3_000, () => 'the first process counted 4 in PostgreSQL');
      // The second has not counted yet: its first request goes (the overshoot of one sync), and
      // once it has added it to the shared count it refuses too.
      expect(await post(second)).to.equal(200);
      await eventually(async () => (await counted()) === 5, 3_000, () => 'the second process counted its request');
      expect(await post(second)).to.equal(429);
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  it('makes a change or revocation of another process effective within 2 s', async () => {
    const second = await TestApp.start({}, { database: app.database });
    try {
      const created = await makeKey([site]);
      const viaSecond = (): Promise<Reply> =>
        second.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${created.browserKey}`, undefined, {
          raw: JSON.stringify(event),
          headers: { 'content-type': 'text/plain', origin: site },
        });
      await eventually(async () => ((await viaSecond()).status === 200 ? true : undefined), 3_000, () => 'the new key in the second process');
      expect((await app.request('DELETE', `${keysPath()}/${created.id}`, undefined, { authorization: admin })).status).to.equal(204);
      const started = Date.now();
      await eventually(async () => ((await viaSecond()).status === 401 ? true : undefined), 3_000, () => 'the revocation in the second process');
      expect(Date.now() - started).to.be.below(2_500);
    } finally {
      await second.stop();
    }
  });
});
