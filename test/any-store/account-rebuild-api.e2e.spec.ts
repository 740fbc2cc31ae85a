import { expect } from 'chai';
import { adminToken, servedApp, type Credentials, type PostOptions, type Reply, type TestApp } from '../support/app.js';
import { accountIdOf, accountsProjected, cursorsOf, holdLeadsOf, leadRowsOf, smallWorkload, type CursorRow } from '../support/account-replay.js';
import { eventually } from '../support/eventually.js';
import { snapshot, type Snapshot } from '../support/projection-harness.js';
import { requestError } from '../support/replies.js';

/** POST /admin/v1/accounts/<license>/projections/rebuild: one account replayed while the others go on. */

const admin = `Bearer ${adminToken}`;
const everyProjection = ['leads', 'user-events', 'products', 'track-index'];
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** The rows of every read model that hold the account's id. */
const rowsOf = (rows: Snapshot, accountId: string): string[] => Object.values(rows).flatMap((table) => table.filter((row) => row.includes(accountId)));

describe('operator API: rebuild one account (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let acme: Credentials;
  let globex: Credentials;
  let acmeId: string;
  let globexId: string;
  let before: Snapshot;
  let acmeCursors: CursorRow[];
  servedApp((started) => ({ app, account: acme } = started), { projections: true });

  beforeEach(async () => {
    globex = await app.account('globex');
    await smallWorkload(app, acme, 'acme');
    await smallWorkload(app, globex, 'globex');
    [acmeId, globexId] = [await accountIdOf(app, acme), await accountIdOf(app, globex)];
    await accountsProjected(app, [acmeId, globexId]);
    before = await snapshot(app.pool);
    acmeCursors = await cursorsOf(app.pool, acmeId);
    expect(acmeCursors.map((c) => c.projection)).to.deep.equal([...everyProjection].sort());
  });

  const rebuild = <T = { accountId: string; projections: string[] }>(license: string, body?: unknown, options: PostOptions = {}): Promise<Reply<T>> =>
    app.request<T>('POST', `/admin/v1/accounts/${license}/projections/rebuild`, body, { authorization: admin, ...options });
  const leadIds = async (account: Credentials): Promise<string[]> => {
    const reply = await app.get<{ leads: { userId: string | null; anonymousId: string | null }[] }>(`/admin/v1/accounts/${account.licenseCode}/leads`, admin);
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body.leads.map((lead) => lead.userId ?? `anon:${lead.anonymousId}`);
  };
  const overviewOf = async (account: Credentials) =>
    (await app.get<{ projections: { lagSeconds: number; lagEvents: number; caughtUp: boolean } }>(`/admin/v1/accounts/${account.licenseCode}/overview`, admin)).body.projections;

  it("answers 202 at once; the account's rows go and come back the same, while another account's stay", async () => {
    const globexLeads = await leadIds(globex);
    // A cursor made again (a replay) is caught up at a new time: the other account's never are.
    const caughtUpTimes = async (accountId: string) => (await cursorsOf(app.pool, accountId)).map((c) => [c.projection, c.caught_up_at?.toISOString()]);
    const globexCaughtUp = await caughtUpTimes(globexId);
    const hold = await holdLeadsOf(app.pool, acmeId);
    try {
      const reply = await rebuild(acme.licenseCode);
      expect(reply.status, show(reply)).to.equal(202);
      expect(reply.body).to.deep.equal({ accountId: acmeId, projections: everyProjection });
      // The replay of its leads waits at the hold: it has none now, and says it is behind.
      expect(await leadIds(acme)).to.deep.equal([]);
      const behind = await eventually(async () => {
        const lag = await overviewOf(acme);
        return !lag.caughtUp && lag;
      }, 10_000, () => 'the overview never said the account is behind');
      expect(behind.lagEvents).to.be.above(0);
      // The other account: its rows as they were, and caught up.
      expect(rowsOf(await snapshot(app.pool), globexId)).to.deep.equal(rowsOf(before, globexId));
      expect(await overviewOf(globex)).to.deep.equal({ lagSeconds: 0, lagEvents: 0, caughtUp: true });
      expect(await leadRowsOf(app.pool, acmeId)).to.equal(0);
    } finally {
      await hold.release();
    }
    await eventually(async () => (await overviewOf(acme)).caughtUp, 20_000, () => 'the account never caught up');
    await app.projected();
    const after = await snapshot(app.pool);
    expect(rowsOf(after, acmeId)).to.deep.equal(rowsOf(before, acmeId));
    expect(rowsOf(after, globexId)).to.deep.equal(rowsOf(before, globexId));
    expect(await leadIds(globex)).to.deep.equal(globexLeads);
    expect(await caughtUpTimes(globexId)).to.deep.equal(globexCaughtUp);
    const remade = await cursorsOf(app.pool, acmeId);
    expect(remade.map((c) => [c.projection, c.checkpoint, c.events_applied])).to.deep.equal(acmeCursors.map((c) => [c.projection, c.checkpoint, c.events_applied]));
  });

  it('rebuilds the one projection a body names, and leaves the account\'s other cursors alone', async () => {
    const reply = await rebuild(acme.licenseCode, { projection: 'products' });
    expect(reply.status, show(reply)).to.equal(202);
    expect(reply.body).to.deep.equal({ accountId: acmeId, projections: ['products'] });
    const caughtUpBefore = acmeCursors.find((c) => c.projection === 'products')?.caught_up_at?.getTime() ?? Infinity;
    const productsCaughtUp = async () => (await cursorsOf(app.pool, acmeId)).find((c) => c.projection === 'products')?.caught_up_at?.getTime() ?? 0;
    // Its cursor made again, and caught up since.
    await eventually(async () => (await productsCaughtUp()) > caughtUpBefore, 10_000, () => 'products never replayed');
    await eventually(async () => (await overviewOf(acme)).caughtUp, 10_000, () => 'the account never caught up');
    await app.projected();
    const cursors = await cursorsOf(app.pool, acmeId);
    expect(cursors.filter((c) => c.projection !== 'products')).to.deep.equal(acmeCursors.filter((c) => c.projection !== 'products'));
    expect(rowsOf(await snapshot(app.pool), acmeId)).to.deep.equal(rowsOf(before, acmeId));
  });

  it('answers 404 for an unknown license code or projection, 400 for a body it cannot take, and changes nothing then', async () => {
    expect(requestError(await rebuild('ffffffffffffffffffffffff'), 404)).to.equal('unknown license code');
    for (const projection of ['nope', 'all', 'LEADS']) expect(requestError(await rebuild(acme.licenseCode, { projection }), 404)).to.contain('no projection of this name');
    expect(requestError(await rebuild(acme.licenseCode, [{ projection: 'leads' }]), 400)).to.equal('body must be a JSON object');
    expect(requestError(await rebuild(acme.licenseCode, { projection: 3 }), 400)).to.contain('projection must be the name of a projection');
    expect(requestError(await rebuild(acme.licenseCode, { projections: 'leads' }), 400)).to.contain('unknown field "projections"');
    requestError(await rebuild(acme.licenseCode, undefined, { raw: '{"projection":' }), 400);
    requestError(await rebuild(acme.licenseCode, undefined, { raw: 'projection=leads', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    expect(requestError(await rebuild(acme.licenseCode, { projection: 'lea\u0000ds' }), 400)).to.contain('NUL');
    expect(await cursorsOf(app.pool, acmeId)).to.deep.equal(acmeCursors);
    expect(await snapshot(app.pool)).to.deep.equal(before);
  });

  it('takes operator credentials only: no credentials, a wrong admin token, an access token or session of the account itself are refused and change nothing', async () => {
    const path = `/admin/v1/accounts/${acme.licenseCode}/projections/rebuild`;
    requestError(await app.request('POST', path), 401);
    requestError(await rebuild(acme.licenseCode, undefined, { authorization: `Bearer ${adminToken}x` }), 401);
    expect(requestError(await rebuild(acme.licenseCode, undefined, { authorization: `Bearer ${acme.accessToken}` }), 403)).to.contain('access token cannot make operator calls');
    requestError(await rebuild(acme.licenseCode, undefined, { authorization: `Bearer ${globex.accessToken}` }), 403);
    const signedIn = await app.request('POST', '/admin/v1/session', { licenseCode: acme.licenseCode, accessToken: acme.accessToken });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(requestError(await app.request('POST', path, undefined, { headers: { cookie } }), 403)).to.contain('account session cannot make operator calls');
    expect(await cursorsOf(app.pool, acmeId)).to.deep.equal(acmeCursors);

    // An operator session may, from the service's own pages only.
    const operator = await app.request('POST', '/admin/v1/session', { adminToken });
    const operatorCookie = (operator.headers.get('set-cookie') ?? '').split(';')[0] as string;
    requestError(await app.request('POST', path, undefined, { headers: { cookie: operatorCookie, origin: 'https://elsewhere.example' } }), 403);
    expect(await cursorsOf(app.pool, acmeId)).to.deep.equal(acmeCursors);
    const accepted = await app.request('POST', path, undefined, { headers: { cookie: operatorCookie } });
    expect(accepted.status, show(accepted)).to.equal(202);
  });
});
