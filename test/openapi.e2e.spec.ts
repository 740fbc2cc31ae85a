import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { JsonObject } from '../src/openapi/json.js';
import { openApiDocumentPath } from '../src/paths.js';
import { adminToken, TestApp, type Credentials, type PostOptions, type Reply } from './support/app.js';
import { until } from './support/eventually.js';
import { DocumentedReplies } from './support/openapi-replies.js';
import { routeLabel } from '../src/http/route-label.js';
import { openApiPath } from '../src/openapi/document.js';
import { bulkResults, queued } from './support/replies.js';

/**
 * The served OpenAPI document, and the service's real replies held against it: each call below is
 * checked for a documented status, a body of the documented schema and documented headers; at the
 * end, every documented operation must have been called.
 */

describe('OpenAPI document served, and the replies it describes (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  const built = readFileSync(openApiDocumentPath);
  const document = JSON.parse(built.toString('utf8')) as JsonObject;
  const replies = new DocumentedReplies(document);
  const admin = `Bearer ${adminToken}`;
  let bearer: string;

  before(async () => {
    app = await TestApp.start({ productEventsPerMinute: 5 }, { projections: true });
    account = await app.account();
    bearer = `Bearer ${account.accessToken}`;
  });
  after(() => app.stop());

  const call = async <T = unknown>(method: string, path: string, body?: unknown, options: PostOptions = {}): Promise<Reply<T>> =>
    replies.check(method, path, await app.request<T>(method, path, body, options));
  const get = <T = unknown>(path: string, authorization?: string) => call<T>('GET', path, undefined, authorization ? { authorization } : {});
  const ingest = (endpoint: string, body: unknown, options: PostOptions = {}) =>
    call('POST', `/v1/accounts/${account.licenseCode}/${endpoint}`, body, { authorization: bearer, ...options });
  const accountPath = (rest: string) => `/admin/v1/accounts/${account.licenseCode}/${rest}`;
  /** Asserts that the CORS headers a reply carries are named where the document describes it. */
  const corsChecked = <T>(method: string, url: string, reply: Reply<T>): Reply<T> => {
    const path = openApiPath(routeLabel(new URL(url, 'http://service').pathname));
    const described = (document.paths as Record<string, Record<string, { responses: Record<string, JsonObject> }>>)[path]?.[method.toLowerCase()];
    let response = described?.responses[String(reply.status)] ?? {};
    const ref = response.$ref;
    if (typeof ref === 'string') response = (document.components as { responses: Record<string, JsonObject> }).responses[ref.split('/').pop() as string] ?? {};
    const named = Object.keys((response.headers as JsonObject | undefined) ?? {}).map((name) => name.toLowerCase());
    const sent = [...reply.headers.keys()].filter((name) => name.startsWith('access-control-') || name === 'vary');
    expect(sent, `${method} ${path} ${reply.status}`).to.include('access-control-allow-origin');
    expect(named, `CORS headers sent but not documented: ${method} ${path} ${reply.status}`).to.include.members(sent);
    return reply;
  };

  it('serves the document the build wrote at /openapi.json, without credentials', async () => {
    const reply = await fetch(`${app.baseUrl}/openapi.json`);
    expect(reply.status).to.equal(200);
    expect(reply.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(Buffer.from(await reply.arrayBuffer()).equals(built)).to.equal(true);
    await get('/openapi.json');
  });

  it('describes the ingest replies: stored, bulk results, form B and form A errors, replays, limits', async () => {
    const user = { userId: 'u-1', firstName: 'Ann', email: 'ann@example.com', attributes: { level: 'gold' } };
    const sent = await ingest('users', user, { headers: { 'idempotency-key': 'k1' } });
    expect(sent.headers.get('ratelimit-remaining')).to.match(/^\d+$/);
    expect((await ingest('users', user, { headers: { 'idempotency-key': 'k1' } })).headers.get('idempotent-replayed')).to.equal('true');
    await ingest('users', { ...user, firstName: 'Bo' }, { headers: { 'idempotency-key': 'k1' } }).then((r) => expect(r.status).to.equal(422));
    await ingest('users', { userId: 'u-2', anonymousId: 'a-2', attributes: {} });
    await ingest('users/bulk', [user, { attributes: {} }]);
    const event = { userId: 'u-1', eventName: 'signup', eventData: { plan: 'pro' } };
    queued(await ingest('events', undefined, { raw: gzipSync(JSON.stringify(event)), headers: { 'content-encoding': 'gzip' } }));
    await ingest('events/bulk', [event, { userId: 'u-1' }]);
    await ingest('products', { productId: 'p-1', properties: { colour: 'red' } });
    await ingest('products/bulk', [{ productId: 'p-2' }]);
    await ingest('productsevents', { productId: 'p-1', userId: null, eventName: 'view' });
    await ingest('productsevents/bulk', [{ productId: 'p-1', userId: 'u-1', eventName: 'view' }]);

    const statuses = [
      await ingest('events', { userId: 'u-1' }),
      await ingest('events', undefined, { raw: '{"userId":' }),
      await ingest('events/bulk', { not: 'an array' }),
      await ingest('events', event, { authorization: 'Bearer wrong' }),
      await ingest('events', undefined, { raw: JSON.stringify(event).padEnd(1024 * 1024 + 1) }),
      await ingest('events', event, { headers: { 'content-type': 'application/xml' } }),
      await ingest('events', undefined, { raw: gzipSync('{}'), headers: { 'content-encoding': 'zstd' } }),
      await ingest('productsevents/bulk', Array.from({ length: 10 }, () => ({ productId: 'p-1', userId: null, eventName: 'view' }))),
    ].map((reply) => reply.status);
    expect(statuses).to.deep.equal([400, 400, 400, 401, 413, 415, 415, 429]);
  });

  it('describes sessions, accounts and access tokens', async () => {
    const signedIn = await call('POST', '/admin/v1/session', { licenseCode: account.licenseCode, accessToken: account.accessToken });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).to.match(/^tracking_session=/);
    await call('GET', '/admin/v1/session', undefined, { headers: { cookie } });
    await call('GET', '/admin/v1/session');
    await call('POST', '/admin/v1/session', { adminToken: 'wrong' });
    await call('POST', '/admin/v1/session', { adminToken });
    expect((await call('DELETE', '/admin/v1/session', undefined, { headers: { cookie } })).status).to.equal(204);

    await get('/admin/v1/accounts', admin);
    await get('/admin/v1/accounts', bearer);
    await get('/admin/v1/accounts');
    const created = await call<{ licenseCode: string; accessToken: string }>('POST', '/admin/v1/accounts', { name: 'Other' }, { authorization: admin });
    await call('POST', '/admin/v1/accounts', { name: ' ' }, { authorization: admin });

    const tokens = await get<{ tokens: { id: string }[] }>(accountPath('tokens'), bearer);
    const made = await call<{ id: string }>('POST', accountPath('tokens'), { label: 'shop', scope: 'ingest' }, { authorization: bearer });
    await call('POST', accountPath('tokens'), { label: 'shop', scope: 'everything' }, { authorization: bearer });
    await get(accountPath('tokens'), `Bearer ${(made.body as unknown as { accessToken: string }).accessToken}`);
    expect((await call('DELETE', accountPath(`tokens/${made.body.id}`), undefined, { authorization: bearer })).status).to.equal(204);
    await call('DELETE', accountPath(`tokens/${made.body.id}`), undefined, { authorization: bearer });
    const other = created.body;
    const only = await get<{ tokens: { id: string }[] }>(`/admin/v1/accounts/${other.licenseCode}/tokens`, `Bearer ${other.accessToken}`);
    const last = await call('DELETE', `/admin/v1/accounts/${other.licenseCode}/tokens/${only.body.tokens[0]?.id}`, undefined, { authorization: `Bearer ${other.accessToken}` });
    expect(last.status).to.equal(409);
    expect(tokens.body.tokens).to.have.length(1);
  });

  it('describes the read API: leads, their events and timeline, the track lookup, live events, warnings, overview', async () => {
    await app.projected();
    const leads = await get<{ leads: unknown[] }>(accountPath('leads?limit=10'), bearer);
    expect(leads.body.leads).to.have.length.above(1);
    expect(leads.headers.get('server-timing')).to.match(/^app;dur=/);
    await get(accountPath('leads?kind=someone'), bearer);
    await get(accountPath('leads/u-1'), bearer);
    await get(accountPath('leads/a-2'), admin);
    await get(accountPath('leads/nobody'), bearer);
    await get(accountPath('leads/u-1/events'), bearer);
    const timeline = await get<{ entries: { trackID: string; eventId: string }[] }>(accountPath('leads/u-2/timeline'), bearer);
    await get(accountPath('leads/u-1/timeline?limit=0'), bearer);
    await get(accountPath(`track/${timeline.body.entries[0]?.trackID}`), bearer);
    await get(accountPath(`events/${timeline.body.entries[0]?.eventId}`), bearer);
    await get(accountPath('events/not-a-uuid'), bearer);
    await get(accountPath('track/not-a-uuid'), bearer);
    const live = await get<{ items: unknown[]; cursor: string }>(accountPath('live?limit=5'), bearer);
    expect(live.body.items).to.have.length(5);
    await get(accountPath(`live?after=${live.body.cursor}&kind=events`), bearer);
    await get(accountPath('live?after=nonsense'), bearer);
    let recorded = 0;
    await until(
      async () => (recorded = (await app.get<{ warnings: unknown[] }>(accountPath('warnings/recent'), bearer)).body.warnings.length) >= 8,
      10_000,
      () => `the refused items were never recorded: ${recorded} recent warnings, not 8`,
    );
    await get(accountPath('warnings'), bearer);
    await get(accountPath('warnings/recent?limit=3'), bearer);
    await get(accountPath('overview'), bearer);
    await get(`/admin/v1/accounts/nosuchlicense/overview`, admin);
    await get(accountPath('overview'));
  });

  it('describes products: the list (a large one truncated), one product, its events, and their refusals', async () => {
    queued(await ingest('products', { productId: 'p-large', properties: { text: 'x'.repeat(5000) } }));
    await app.projected();
    const list = await get<{ products: { productId: string; truncated?: unknown }[]; nextCursor: string }>(accountPath('products?limit=2'), bearer);
    expect(list.body.products.map((product) => [product.productId, Boolean(product.truncated)])).to.deep.equal([['p-large', true], ['p-2', false]]);
    expect(list.headers.get('server-timing')).to.match(/^app;dur=/);
    await get(accountPath(`products?q=P-&cursor=${list.body.nextCursor}`), admin);
    await get(accountPath('products?cursor=nonsense'), bearer);
    await get(accountPath('products'), `Bearer ${account.licenseCode}`);
    await get(accountPath('products/p-1'), bearer);
    await get(accountPath('products/p-none'), bearer);
    const events = await get<{ events: unknown[] }>(accountPath('products/p-1/events?limit=5'), bearer);
    expect(events.body.events).to.have.length(2);
    await get(accountPath('products/p-1/events?limit=501'), bearer);
    await get(accountPath('products/p-none/events'), bearer);
  });

  it('describes the export and the feed: NDJSON, CSV, a page with its cursor, and their refusals', async () => {
    const ndjson = await get<string>(accountPath('export'), bearer);
    expect(ndjson.headers.get('content-type')).to.equal('application/x-ndjson; charset=utf-8');
    const first = JSON.parse(String(ndjson.body).split('\n')[0] ?? '') as { cursor: string };
    const csv = await get<string>(accountPath(`export?format=csv&kind=events&after=${first.cursor}`), admin);
    expect(String(csv.body).split('\n')[0]).to.match(/^event_id,/);
    await get(accountPath('export?format=csv'), bearer);
    await get(accountPath('export'), `Bearer ${account.licenseCode}`);
    const page = await get<{ events: unknown[]; next: string }>(accountPath('feed?limit=2'), bearer);
    expect(page.body.events).to.have.length(2);
    await get(accountPath(`feed?after=${page.body.next}&limit=1000`), bearer);
    await get(accountPath('feed?wait=21'), bearer);
  });

  it('describes erasure: the request, its state, the list, and an erased event in the track lookup', async () => {
    const trackID = (await ingest('events', { userId: 'u-erase', eventName: 'gone', eventData: { note: 'private' } })).body as { response: { trackID: string } };
    const path = `/v1/accounts/${account.licenseCode}/erasures`;
    const requested = await call<{ id: string; state: string }>('POST', path, { userId: 'u-erase' }, { authorization: bearer });
    expect(requested.status).to.equal(202);
    await call('POST', path, { nobody: 'x' }, { authorization: bearer });
    await get(`${path}/${requested.body.id}`, bearer);
    await get(`${path}/00000000-0000-4000-8000-000000000000`, bearer);
    await get(`${path}?limit=1`, admin);
    await get(`${path}?limit=0`, bearer);
    await until(async () => (await app.get<{ state: string }>(`${path}/${requested.body.id}`, bearer)).body.state === 'done', 60_000, () => 'the erasure never finished');
    await get(`${path}/${requested.body.id}`, bearer);
    expect((await call<{ erasures: unknown[] }>('POST', `${path}/lookup`, { userId: 'u-erase' }, { authorization: bearer })).body.erasures).to.have.length(1);
    await call('POST', `${path}/lookup`, {}, { authorization: bearer });
    await app.projected();
    const lookup = await get<{ events: { erasedBy?: unknown }[] }>(accountPath(`track/${trackID.response.trackID}`), bearer);
    expect(lookup.body.events[0]?.erasedBy).to.deep.include({ erasureId: requested.body.id });
    expect((requested.body as { requestedByToken?: unknown }).requestedByToken).to.deep.include({ label: 'initial', revokedAt: null });

    // An anonymous id merged into a user, then erased alone: its entries stay in the user's timeline, marked erased.
    await ingest('users', { anonymousId: 'a-erase', attributes: { plan: 'trial' } });
    await ingest('events', { anonymousId: 'a-erase', eventName: 'visit' });
    await ingest('users', { userId: 'u-stays', anonymousId: 'a-erase', attributes: {} });
    await app.projected();
    const anonymous = await call<{ id: string }>('POST', path, { anonymousId: 'a-erase' }, { authorization: bearer });
    await until(async () => (await app.get<{ state: string }>(`${path}/${anonymous.body.id}`, bearer)).body.state === 'done', 60_000, () => 'the erasure never finished');
    await app.projected();
    const timeline = await get<{ entries: { erasedBy?: { erasureId: string | null } }[] }>(accountPath('leads/u-stays/timeline'), bearer);
    // Its profile, its event and its merge into the user.
    expect(timeline.body.entries.filter((entry) => entry.erasedBy).map((entry) => entry.erasedBy?.erasureId)).to.deep.equal([anonymous.body.id, anonymous.body.id, anonymous.body.id]);
  });

  it('describes the projections calls', async () => {
    const idle = await TestApp.start();
    try {
      const check = async (method: string, path: string) => replies.check(method, path, await idle.request(method, path, undefined, { authorization: admin }));
      await check('GET', '/admin/v1/projections');
      await check('POST', '/admin/v1/projections/leads/retry');
      expect((await check('POST', '/admin/v1/projections/leads/rebuild')).status).to.equal(202);
      // No worker runs in this app: the rebuild stays requested.
      expect((await check('POST', '/admin/v1/projections/leads/rebuild')).status).to.equal(409);
      expect((await check('POST', '/admin/v1/projections/leads/retry')).status).to.equal(409);
      await check('POST', '/admin/v1/projections/all/rebuild');
      await check('GET', '/admin/v1/projections');

      const owner = await idle.account();
      const rebuildOf = (license: string, body?: unknown, authorization = admin) =>
        idle.request('POST', `/admin/v1/accounts/${license}/projections/rebuild`, body, { authorization }).then((reply) => replies.check('POST', `/admin/v1/accounts/${license}/projections/rebuild`, reply));
      const statuses = [
        await rebuildOf(owner.licenseCode),
        await rebuildOf(owner.licenseCode, { projection: 'leads' }),
        await rebuildOf(owner.licenseCode, { projection: 'all' }),
        await rebuildOf(owner.licenseCode, { projections: ['leads'] }),
        await rebuildOf('nosuchlicense'),
        await rebuildOf(owner.licenseCode, undefined, `Bearer ${owner.accessToken}`),
      ].map((reply) => reply.status);
      expect(statuses).to.deep.equal([202, 202, 404, 400, 404, 403]);
    } finally {
      await idle.stop();
    }
  });

  it('describes browser keys, the browser SDK, and what pages get under /v1: CORS headers, preflights, text/plain, the key in the query', async () => {
    const owner = await app.account('Pages');
    const ownerBearer = `Bearer ${owner.accessToken}`;
    const keys = `/admin/v1/accounts/${owner.licenseCode}/browser-keys`;
    const site = 'https://shop.example.com';
    const made = await call<{ id: string; browserKey: string }>('POST', keys, { label: 'shop', origins: [site] }, { authorization: ownerBearer });
    const { id, browserKey } = made.body;
    const statuses = [
      made,
      await call('POST', keys, { label: 'shop', origins: ['https://shop.example.com/path'] }, { authorization: ownerBearer }),
      await get(keys, ownerBearer),
      await get(keys, `Bearer ${browserKey}`),
      await call('PATCH', `${keys}/${id}`, { origins: [site, 'https://*.example.org'] }, { authorization: ownerBearer }),
      await call('PATCH', `${keys}/${id}`, {}, { authorization: ownerBearer }),
      await call('PATCH', `${keys}/00000000-0000-4000-8000-000000000000`, { label: 'other' }, { authorization: admin }),
    ].map((reply) => reply.status);
    expect(statuses).to.deep.equal([201, 400, 200, 401, 200, 400, 404]);

    // What a page sends: the key in the query string, a text/plain body, its Origin. Every reply
    // under /v1 to it names the CORS headers it carries, whatever its status.
    const fromPage = async (endpoint: string, body: unknown, query = '', origin = site, key = browserKey) => {
      const path = `/v1/accounts/${owner.licenseCode}/${endpoint}?key=${encodeURIComponent(key)}${query}`;
      return corsChecked('POST', path, await call('POST', path, undefined, { raw: JSON.stringify(body), headers: { 'content-type': 'text/plain;charset=UTF-8', origin } }));
    };
    const event = { anonymousId: 'visitor-1', eventName: 'page_view' };
    const sent = await fromPage('events/bulk', [event], '&idempotencyKey=batch-1');
    expect(bulkResults(sent).map((result) => result.status)).to.deep.equal(['queued']);
    expect(sent.headers.get('access-control-allow-origin')).to.equal(site);
    expect((await fromPage('events/bulk', [event], '&idempotencyKey=batch-1')).headers.get('idempotent-replayed')).to.equal('true');
    const refusals = [
      await fromPage('events', event, '', 'https://a.example.org'),
      await fromPage('events', event, '', 'https://evil.example'),
      await fromPage('events', event, '', site, owner.accessToken),
      await fromPage('events', { anonymousId: 'visitor-1' }),
      await fromPage('users', event, '&idempotencyKey=batch-1&idempotencyKey=again'),
      await corsChecked('POST', '/v1/accounts/x/events', await ingest('events', event, { headers: { origin: site } })),
    ].map((reply) => reply.status);
    expect(refusals).to.deep.equal([200, 403, 401, 400, 400, 403]);

    for (const endpoint of ['users', 'users/bulk', 'events', 'events/bulk', 'products', 'products/bulk', 'productsevents', 'productsevents/bulk']) {
      const path = `/v1/accounts/${owner.licenseCode}/${endpoint}`;
      const headers = { origin: site, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };
      const preflight = await corsChecked('OPTIONS', path, await call('OPTIONS', path, undefined, { headers }));
      expect(preflight.status).to.equal(204);
    }

    for (let n = 2; n <= 20; n += 1) expect((await app.request('POST', keys, { label: `key ${n}`, origins: [site] }, { authorization: ownerBearer })).status).to.equal(201);
    expect((await call('POST', keys, { label: 'one too many', origins: [site] }, { authorization: ownerBearer })).status).to.equal(409);
    expect((await call('DELETE', `${keys}/${id}`, undefined, { authorization: ownerBearer })).status).to.equal(204);
    expect((await call('DELETE', `${keys}/${id}`, undefined, { authorization: ownerBearer })).status).to.equal(404);
    expect((await fromPage('events', event)).status).to.equal(401);

    const manifest = await get<{ files: { name: string; path: string; integrity: string }[] }>('/sdk/manifest.json');
    const pinned = manifest.status === 200 ? manifest.body.files.map((file) => file.path) : ['/sdk/v0.1.0-000000000000/tracking.js'];
    for (const path of [...pinned, '/sdk/tracking.mjs', '/sdk/tracking.js', '/sdk/nothing.js', '/sdk/v0.0.1/tracking.js']) {
      const reply = await fetch(app.baseUrl + path);
      const json = (reply.headers.get('content-type') ?? '').includes('json');
      replies.check('GET', path, { status: reply.status, body: json ? await reply.json() : await reply.text(), headers: reply.headers });
    }
    if (manifest.status === 200) {
      const file = manifest.body.files[0] as { name: string; integrity: string };
      const reply = await fetch(`${app.baseUrl}/sdk/${file.name}`, { headers: { 'if-none-match': `"${file.integrity}"` } });
      expect(replies.check('GET', `/sdk/${file.name}`, { status: reply.status, body: await reply.text(), headers: reply.headers }).status).to.equal(304);
    }
  });

  it("describes Segment's API: batches, single calls and their short paths, refusals, the browser settings", async () => {
    const basic = `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}`;
    const segment = (path: string, body: unknown, options: PostOptions = {}) => call('POST', path, body, { authorization: basic, ...options });
    const messages: Record<string, Record<string, unknown>> = {
      identify: { userId: 'u-1', traits: { email: 'ann@example.com' } },
      track: { userId: 'u-1', event: 'Signed Up', properties: { plan: 'pro' } },
      page: { anonymousId: 'a-1', name: 'Pricing' },
      screen: { userId: 'u-1', name: 'Home' },
      group: { userId: 'u-1', groupId: 'g-1', traits: { name: 'Acme' } },
      alias: { userId: 'u-1', previousId: 'a-1' },
    };
    const short: Record<string, string> = { identify: 'i', track: 't', page: 'p', screen: 's', group: 'g', alias: 'a' };
    for (const [type, message] of Object.entries(messages)) {
      queued(await segment(`/v1/${type}`, message));
      queued(await segment(`/v1/${short[type] as string}`, undefined, { raw: JSON.stringify({ ...message, writeKey: account.accessToken }), authorization: '', headers: { 'content-type': 'text/plain' } }));
    }
    const batch = { batch: Object.entries(messages).map(([type, message]) => ({ type, ...message })) };
    expect(bulkResults(await segment('/v1/batch', batch)).map((r) => r.status)).to.deep.equal(Array(6).fill('queued'));
    expect(bulkResults(await segment('/v1/b', batch)).map((r) => r.status)).to.have.length(6);
    expect(bulkResults(await segment('/v1/import/', batch)).map((r) => r.status)).to.have.length(6);
    const statuses = [
      await segment('/v1/track', { userId: 'u-1' }),
      await segment('/v1/batch', { batch: 'no' }),
      await segment('/v1/batch', batch, { authorization: `Basic ${Buffer.from('wrong:').toString('base64')}` }),
      await segment('/v1/batch', batch, { headers: { origin: 'https://shop.example.com' } }),
    ].map((reply) => reply.status);
    expect(statuses).to.deep.equal([400, 400, 401, 403]);
    const owner = await app.account('Segment pages');
    const made = await app.request<{ browserKey: string }>('POST', `/admin/v1/accounts/${owner.licenseCode}/browser-keys`, { label: 'shop', origins: ['https://shop.example.com'] }, { authorization: `Bearer ${owner.accessToken}` });
    const settings = await get<{ integrations: Record<string, { apiKey: string }> }>(`/v1/projects/${made.body.browserKey}/settings`);
    expect(settings.body.integrations['Segment.io']?.apiKey).to.equal(made.body.browserKey);
    expect((await get(`/v1/projects/${account.accessToken}/settings`)).status).to.equal(401);
    expect((await get('/v1/projects/tbk_unknown/settings')).status).to.equal(404);
  });

  it("describes the account's settings: the address policy read and changed, its refusals", async () => {
    const owner = await app.account('Settings');
    const ownerBearer = `Bearer ${owner.accessToken}`;
    const settings = `/admin/v1/accounts/${owner.licenseCode}/settings`;
    const ingestOnly = await app.request<{ accessToken: string }>('POST', `/admin/v1/accounts/${owner.licenseCode}/tokens`, { label: 'server', scope: 'ingest' }, { authorization: ownerBearer });
    const statuses = [
      await get(settings, ownerBearer),
      await call('PATCH', settings, { addressPolicy: 'keep' }, { authorization: ownerBearer }),
      await get(settings, admin),
      await call('PATCH', settings, { addressPolicy: 'hash' }, { authorization: ownerBearer }),
      await call('PATCH', settings, { addressPolicy: 'drop', other: 1 }, { authorization: admin }),
      await get(settings),
      await get(settings, `Bearer ${ingestOnly.body.accessToken}`),
      await call('PATCH', settings, { addressPolicy: 'drop' }, { authorization: `Bearer ${ingestOnly.body.accessToken}` }),
      await get('/admin/v1/accounts/nosuchlicense/settings', admin),
    ].map((reply) => reply.status);
    expect(statuses).to.deep.equal([200, 200, 200, 400, 400, 401, 403, 403, 404]);
    expect((await get<{ addressPolicy: string }>(settings, ownerBearer)).body).to.deep.equal({ addressPolicy: 'keep' });
  });

  it('describes health, metrics and the dashboard', async () => {
    for (const path of ['/livez', '/readyz', '/healthz', '/metrics', '/dashboard', '/dashboard/leads/u-1']) await get(path);
    const root = await fetch(`${app.baseUrl}/`, { redirect: 'manual' });
    replies.check('GET', '/', { status: root.status, body: await root.text(), headers: root.headers });
    const html = await (await fetch(`${app.baseUrl}/dashboard`)).text();
    const asset = /src="(\/dashboard\/assets\/[^"]+)"/.exec(html)?.[1] as string;
    for (const path of [asset, '/dashboard/assets/missing.js']) {
      const reply = await fetch(app.baseUrl + path);
      replies.check('GET', path, { status: reply.status, body: reply.status === 200 ? '' : await reply.json(), headers: reply.headers });
    }
  });

  it('has had a reply of every operation it documents', () => {
    expect([...replies.seen].sort()).to.deep.equal(replies.operations().sort());
  });
});
