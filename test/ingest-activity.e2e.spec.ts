import { expect } from 'chai';
import { adminToken, servedApp, type Credentials, type Reply, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { bulkResults, itemError, queued, requestError } from './support/replies.js';

/** Ingestion warnings and overview (docs/api.md): what each account's ingest accepted and rejected. */

interface Example {
  at: string;
  endpoint: string;
  status: number;
  message: string;
  excerpt: string | null;
  truncated: boolean;
}
interface Group {
  reason: string;
  field: string;
  endpoint: string;
  count: number;
  lastSeenAt: string;
  examples: Example[];
}
interface Warning extends Example {
  endpoint: string;
  reason: string;
  field: string;
}
interface Bucket {
  start: string;
  endpoint: string;
  accepted: number;
  rejected: number;
}
interface Overview {
  perMinute: Bucket[];
  perHour: Bucket[];
  projections: { lagSeconds: number; lagEvents: number; caughtUp: boolean };
}

const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** GETs `path` until `done` holds for the 200 body (the recorder writes once a second), at most 10 s. */
async function pollUntil<T>(app: TestApp, path: string, authorization: string, done: (body: T) => boolean): Promise<T> {
  let last: Reply<T> | undefined;
  return eventually(
    async () => {
      const reply = (last = await app.get<T>(path, authorization));
      expect(reply.status, show(reply)).to.equal(200);
      return done(reply.body) && reply.body;
    },
    10_000,
    () => `${path} never got there: ${last ? show(last) : 'no reply'}`,
  );
}

const sum = (buckets: Bucket[], endpoint: string, field: 'accepted' | 'rejected'): number =>
  buckets.filter((b) => b.endpoint === endpoint).reduce((total, b) => total + b[field], 0);

describe('ingest activity: warnings and overview (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { config: { productEventsPerMinute: 2 } });

  const path = (which: string, of = account): string => `/admin/v1/accounts/${of.licenseCode}/${which}`;

  it('counts accepted single items and bulk elements per endpoint in the overview', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'view' }));
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'click' }));
    queued(await app.ingest(account, 'products', { productId: 'p-1' }));
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-2', attributes: {} },
        { userId: 'u-3', attributes: {} },
        { attributes: {} },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'queued', 'error']);

    const overview = await pollUntil<Overview>(app, path('overview'), bearer(account), (o) => sum(o.perMinute, 'users/bulk', 'accepted') === 2);
    for (const buckets of [overview.perMinute, overview.perHour]) {
      expect(sum(buckets, 'users', 'accepted')).to.equal(1);
      expect(sum(buckets, 'events', 'accepted')).to.equal(2);
      expect(sum(buckets, 'products', 'accepted')).to.equal(1);
      expect(sum(buckets, 'users/bulk', 'accepted')).to.equal(2);
      expect(sum(buckets, 'users/bulk', 'rejected')).to.equal(1);
      expect(sum(buckets, 'productsevents', 'accepted')).to.equal(0);
    }
    const bucket = overview.perMinute.find((b) => b.endpoint === 'events') as Bucket;
    expect(bucket.start).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
    expect(Date.now() - Date.parse(bucket.start)).to.be.within(0, 120_000);
    expect(overview.perHour.find((b) => b.endpoint === 'events')?.start).to.match(/T\d\d:00:00\.000Z$/);
    // No projection worker runs here: the stored events wait.
    expect(overview.projections.caughtUp).to.equal(false);
    expect(overview.projections.lagSeconds).to.be.above(0);
    expect(overview.projections.lagEvents).to.be.above(0);
  });

  it('remembers invalid items, failing bulk elements, 413 and 429 by reason, with the message the client got and an excerpt', async () => {
    const invalid = itemError(await app.ingest(account, 'events', { userId: 'u-1' }));
    const bulk = bulkResults(await app.ingest(account, 'users/bulk', [{ userId: 'u-9', attributes: {} }, { userId: 'u-9', attributes: 'nope' }]));
    const bulkMessage = bulk[1]?.message as string;
    const tooLarge = requestError(await app.ingest(account, 'events', null, { raw: `{"userId":"u-1","eventName":"${'x'.repeat(1024 * 1024)}"}` }), 413);
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', eventName: 'view' }));
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', eventName: 'view' }));
    const limited = requestError(await app.ingest(account, 'productsevents', { productId: 'p-1', eventName: 'view' }), 429);
    const unsupported = requestError(await app.ingest(account, 'events', null, { raw: 'userId=u-1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    const malformed = requestError(await app.ingest(account, 'products', null, { raw: '{"productId": "p-1",' }), 400);
    const key = { headers: { 'idempotency-key': 'k-1' } };
    queued(await app.ingest(account, 'products', { productId: 'p-1' }, key));
    const mismatch = requestError(await app.ingest(account, 'products', { productId: 'p-2' }, key), 422);

    const { groups } = await pollUntil<{ groups: Group[] }>(app, path('warnings'), bearer(account), (body) => body.groups.length >= 7);
    const group = (reason: string, field = ''): Group => {
      const found = groups.find((g) => g.reason === reason && g.field === field);
      expect(found, `${reason} ${field} in ${JSON.stringify(groups)}`).to.not.equal(undefined);
      return found as Group;
    };
    expect(groups.map((g) => g.reason).sort()).to.deep.equal(['idempotency_mismatch', 'malformed_json', 'rate_limited', 'schema', 'schema', 'too_large', 'unsupported_media_type']);

    // One group per reason, field and endpoint: the two schema errors are about different fields.
    const badAttributes = group('schema', 'attributes');
    expect(badAttributes).to.include({ endpoint: 'users/bulk', count: 1 });
    expect(badAttributes.examples).to.have.length(1);
    expect(badAttributes.examples[0]).to.include({ status: 200, message: bulkMessage, excerpt: '{"userId":"u-9","attributes":"nope"}', truncated: false });
    expect(Date.parse(badAttributes.lastSeenAt)).to.equal(Date.parse((badAttributes.examples[0] as Example).at));
    const missingName = group('schema', 'eventName');
    expect(missingName).to.include({ endpoint: 'events', count: 1 });
    expect(missingName.examples[0]).to.include({ status: 400, message: invalid, excerpt: '{"userId":"u-1"}', truncated: false });

    // Refused requests are about the request as a whole: no field.
    expect(group('too_large')).to.include({ endpoint: 'events' });
    expect(group('too_large').examples[0]).to.include({ status: 413, message: tooLarge, excerpt: null, truncated: false });
    expect(group('rate_limited')).to.include({ count: 1, endpoint: 'productsevents' });
    expect(group('rate_limited').examples[0]).to.include({ status: 429, message: limited, excerpt: null });
    expect(group('unsupported_media_type').examples[0]).to.include({ status: 415, message: unsupported, excerpt: null });
    expect(group('malformed_json')).to.include({ endpoint: 'products' });
    expect(group('malformed_json').examples[0]).to.include({ status: 400, message: malformed, excerpt: '{"productId": "p-1",' });
    expect(group('idempotency_mismatch')).to.include({ endpoint: 'products' });
    expect(group('idempotency_mismatch').examples[0]).to.include({ status: 422, message: mismatch, excerpt: '{"productId":"p-2"}' });
    // The latest seen first.
    expect(groups[0]?.reason).to.equal('idempotency_mismatch');

    const recent = await app.get<{ warnings: Warning[] }>(path('warnings/recent?limit=3'), bearer(account));
    expect(recent.status, show(recent)).to.equal(200);
    expect(recent.body.warnings.map((w) => w.reason)).to.deep.equal(['idempotency_mismatch', 'malformed_json', 'unsupported_media_type']);
    const all = await app.get<{ warnings: Warning[] }>(path('warnings/recent'), `Bearer ${adminToken}`);
    expect(all.body.warnings.map((w) => w.status)).to.deep.equal([422, 400, 415, 429, 413, 200, 400]);
    expect(all.body.warnings.map((w) => w.field)).to.deep.equal(['', '', '', '', '', 'attributes', 'eventName']);

    // The recent list narrowed by reason, field and endpoint; an empty field is the request as a whole.
    const only = async (query: string): Promise<Warning[]> => {
      const reply = await app.get<{ warnings: Warning[] }>(path(`warnings/recent?${query}`), bearer(account));
      expect(reply.status, show(reply)).to.equal(200);
      return reply.body.warnings;
    };
    expect((await only('field=attributes')).map((w) => w.message)).to.deep.equal([bulkMessage]);
    expect((await only('reason=schema&endpoint=events')).map((w) => w.message)).to.deep.equal([invalid]);
    expect((await only('field=')).map((w) => w.status)).to.deep.equal([422, 400, 415, 429, 413]);
    expect((await only('endpoint=products&limit=1')).map((w) => w.status)).to.deep.equal([422]);
    expect(await only('reason=nothing-like-it')).to.deep.equal([]);
    expect((await app.get(path('warnings/recent?field=a&field=b'), bearer(account))).status).to.equal(400);
  });

  it('keeps at most 2 KB of a big body, cut at a character boundary, and says it is cut', async () => {
    const body = JSON.stringify({ userId: 'u-1', eventData: { note: 'é'.repeat(3000) } });
    itemError(await app.ingest(account, 'events', null, { raw: body }));
    const { warnings } = await pollUntil<{ warnings: Warning[] }>(app, path('warnings/recent'), bearer(account), (w) => w.warnings.length === 1);
    const excerpt = (warnings[0] as Warning).excerpt as string;
    expect(warnings[0]?.truncated).to.equal(true);
    expect(body.startsWith(excerpt)).to.equal(true);
    // The prefix before the é's is 37 bytes: 2048 bytes would end inside an é.
    expect(Buffer.byteLength(excerpt)).to.equal(2047);
    expect(excerpt).to.not.contain('\uFFFD');
  });

  it('shows one account none of another account’s activity', async () => {
    const other = await app.account('other');
    itemError(await app.ingest(account, 'events', { userId: 'u-1' }));
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'view' }));
    await pollUntil<{ groups: Group[] }>(app, path('warnings'), bearer(account), (body) => body.groups.length === 1);
    await pollUntil<Overview>(app, path('overview'), bearer(account), (o) => sum(o.perMinute, 'events', 'accepted') === 1);

    const signIn = await app.request('POST', '/admin/v1/session', { licenseCode: other.licenseCode, accessToken: other.accessToken });
    expect(signIn.status, show(signIn)).to.equal(200);
    const cookie = (signIn.headers.getSetCookie()[0] as string).split(';')[0] as string;
    const withSession = (which: string, of = account): Promise<Reply> => app.request('GET', path(which, of), undefined, { headers: { cookie } });
    for (const which of ['warnings', 'warnings/recent', 'overview']) {
      requestError(await app.get(path(which), bearer(other)), 401);
      requestError(await withSession(which), 403);
    }
    expect(((await withSession('warnings', other)).body as { groups: Group[] }).groups).to.deep.equal([]);
    expect((await app.get<{ groups: Group[] }>(path('warnings', other), bearer(other))).body.groups).to.deep.equal([]);
    expect((await app.get<{ warnings: Warning[] }>(path('warnings/recent', other), bearer(other))).body.warnings).to.deep.equal([]);
    const overview = (await app.get<Overview>(path('overview', other), bearer(other))).body;
    expect(overview.perMinute).to.deep.equal([]);
    expect(overview.perHour).to.deep.equal([]);
  });

  it("records a wrong token of the account's license code, without its body; an unknown license code is nobody's", async () => {
    requestError(await app.ingest({ ...account, licenseCode: 'f'.repeat(24) }, 'events', { userId: 'u-0' }, { authorization: 'Bearer wrong' }), 401);
    requestError(await app.ingest(account, 'events', { userId: 'u-1' }, { authorization: 'Bearer wrong' }), 401);
    itemError(await app.ingest(account, 'events', { userId: 'u-2' }));
    const { warnings } = await pollUntil<{ warnings: Warning[] }>(app, path('warnings/recent'), bearer(account), (w) => w.warnings.length > 1);
    expect(warnings.map((w) => [w.reason, w.status, w.excerpt]).sort()).to.deep.equal([
      ['schema', 400, '{"userId":"u-2"}'],
      ['unauthorized', 401, null],
    ]);
  });

  it('refuses a limit out of range with 400 form A naming it', async () => {
    for (const limit of ['0', '1001', 'ten', '1.5']) {
      expect(requestError(await app.get(path(`warnings/recent?limit=${limit}`), bearer(account)), 400)).to.contain('limit');
    }
  });
});

describe('ingest activity: the overview with projection workers running (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  it('says the projections have caught up once they have applied every stored event', async () => {
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'view' }));
    await app.projected();
    const overview = await pollUntil<Overview>(app, `/admin/v1/accounts/${account.licenseCode}/overview`, bearer(account), (o) => o.perMinute.length > 0);
    expect(overview.projections).to.deep.equal({ lagSeconds: 0, lagEvents: 0, caughtUp: true });
    expect(overview.perMinute.map((b) => [b.endpoint, b.accepted, b.rejected])).to.deep.equal([['events', 1, 0]]);
  });
});

describe("ingest activity: each account's overview tells its own lag (e2e)", () => {
  let app: TestApp;
  let account: Credentials;
  // No projection worker: whatever is posted stays unapplied.
  servedApp((started) => ({ app, account } = started));

  it("says an account is behind by its own unapplied events, and another account's backlog leaves a quiet account caught up", async () => {
    for (let i = 0; i < 3; i += 1) queued(await app.ingest(account, 'users', { userId: `u-${i}`, attributes: {} }));
    const quiet = await app.account('quiet');
    const busy = await pollUntil<Overview>(app, `/admin/v1/accounts/${account.licenseCode}/overview`, bearer(account), (o) => o.perMinute.length > 0);
    // Three profiles, each for leads and for the track index.
    expect(busy.projections).to.include({ lagEvents: 6, caughtUp: false });
    expect(busy.projections.lagSeconds).to.be.above(0);
    const calm = await app.get<Overview>(`/admin/v1/accounts/${quiet.licenseCode}/overview`, bearer(quiet));
    expect(calm.status).to.equal(200);
    expect(calm.body.projections).to.deep.equal({ lagSeconds: 0, lagEvents: 0, caughtUp: true });
  });
});
