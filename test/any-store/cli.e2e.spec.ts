import { expect } from 'chai';
import type { ProjectionsStatus } from '../../projections/runner/status.js';
import { TestApp, type Credentials } from '../support/app.js';
import { tracking } from '../support/cli.js';
import { queued } from '../support/replies.js';

describe('the tracking command (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    app = await TestApp.start({}, { projections: true });
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  it('creates and lists accounts, and rotates a token so that the old one is refused', async () => {
    const created = await tracking(app, 'accounts', 'create', 'Globex', 'Corp', '--json');
    expect(created.code, created.stderr).to.equal(0);
    const globex = JSON.parse(created.stdout) as { name: string; licenseCode: string; accessToken: string };
    expect(globex.name).to.equal('Globex Corp');
    queued(await app.ingest(globex, 'users', { userId: 'u1', attributes: {} }));

    const listed = await tracking(app, 'accounts', 'list');
    expect(listed.stdout).to.contain(globex.licenseCode).and.contain('Globex Corp').and.contain(account.licenseCode);
    expect(listed.stdout).not.to.contain(globex.accessToken);

    const rotated = await tracking(app, 'accounts', 'rotate-token', globex.licenseCode, '--json');
    expect(rotated.code, rotated.stderr).to.equal(0);
    const { accessToken } = JSON.parse(rotated.stdout) as { accessToken: string };
    expect(accessToken).not.to.equal(globex.accessToken);
    // A process that has not cached the account yet sees the new token only.
    const other = await TestApp.start({}, { database: app.database });
    try {
      expect((await other.ingest(globex, 'users', { userId: 'u2', attributes: {} })).status).to.equal(401);
      queued(await other.ingest({ ...globex, accessToken }, 'users', { userId: 'u2', attributes: {} }));
    } finally {
      await other.stop();
    }

    const unknown = await tracking(app, 'accounts', 'rotate-token', 'ffffffffffffffffffffffff');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no account with license code');
  });

  it('audits a trackID: its stored events, then its stream in order up to and including them', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-7', email: 'first@example.com', attributes: {} }));
    queued(await app.ingest(account, 'events', { userId: 'u-7', eventName: 'signup', eventData: { plan: 'pro' } }));
    const trackId = queued(await app.ingest(account, 'users', { userId: 'u-7', anonymousId: 'anon-7', attributes: { plan: 'pro' } }));
    queued(await app.ingest(account, 'users', { userId: 'u-7', points: 5, attributes: {} }));
    await app.projected();

    const text = await tracking(app, 'audit', trackId);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain(`trackID ${trackId}: 2 stored event(s)`);
    const streamPart = text.stdout.slice(text.stdout.indexOf('\nstream '));
    const types = [...streamPart.matchAll(/#(\d+) {2}(\w+)/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(types).to.deep.equal(['0 UserUpserted', '1 EventTracked', '2 UserUpserted', '3 ProfilesMerged']);

    const json = await tracking(app, 'audit', trackId, '--json');
    const audit = JSON.parse(json.stdout) as { events: { type: string; metadata: { trackId: string } }[]; streams: Record<string, unknown[]> };
    expect(audit.events.map((e) => e.type)).to.deep.equal(['UserUpserted', 'ProfilesMerged']);
    expect(audit.events.every((e) => e.metadata.trackId === trackId)).to.equal(true);
    expect(Object.values(audit.streams)[0]).to.have.length(4);

    const unknown = await tracking(app, 'audit', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('unknown trackID');
  });

  it("shows each projection's lag, and the running service's worker holding every part", async () => {
    queued(await app.ingest(account, 'users', { userId: 'u1', attributes: {} }));
    await app.projected();
    const status = await tracking(app, 'projections', 'status', '--json');
    expect(status.code, status.stderr).to.equal(0);
    const whole = JSON.parse(status.stdout) as ProjectionsStatus;
    expect(whole.projections.map((p) => p.projection)).to.deep.equal(['leads', 'user-events', 'products', 'track-index']);
    for (const p of whole.projections) expect(p.lagEvents, p.projection).to.equal(0);
    expect(whole.projections.find((p) => p.projection === 'leads')?.eventsApplied).to.equal(1);
    const me = `${process.pid}@${(await import('node:os')).hostname()}`;
    expect(whole.workers.map((w) => w.worker)).to.deep.equal([me]);
    expect(whole.parts.map((p) => p.owner?.worker)).to.deep.equal(whole.parts.map(() => me));
    const text = await tracking(app, 'projections', 'status');
    expect(text.stdout).to.contain(`workers: ${me} (parts 0, 1, 2`).and.contain(`parts: ${whole.parts.length} of ${whole.parts.length} held`).and.contain('no account behind');
  });

  it('rebuilds a projection through the running workers and reports the events replayed', async () => {
    for (let i = 0; i < 5; i += 1) queued(await app.ingest(account, 'users', { userId: `u${i}`, attributes: {} }));
    await app.projected();
    const before = await app.pool.query('SELECT to_jsonb(l) AS row FROM leads l ORDER BY profile_id');
    const rebuilt = await tracking(app, 'projections', 'rebuild', 'leads');
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stdout).to.match(/leads: rebuilt by the workers, 5 events replayed in [\d.]+ s/);
    const after = await app.pool.query('SELECT to_jsonb(l) AS row FROM leads l ORDER BY profile_id');
    expect(after.rows).to.deep.equal(before.rows);
  });

  it('rebuilds in its own process when no worker is running', async () => {
    const apiOnly = await TestApp.start();
    try {
      const acct = await apiOnly.account();
      for (let i = 0; i < 3; i += 1) queued(await apiOnly.ingest(acct, 'products', { productId: `p${i}`, properties: { i } }));
      const rebuilt = await tracking(apiOnly, 'projections', 'rebuild', 'products');
      expect(rebuilt.stdout).to.match(/products: rebuilt in this process, 3 events replayed/);
      const { rows } = await apiOnly.pool.query('SELECT product_id FROM products ORDER BY product_id');
      expect(rows.map((r: { product_id: string }) => r.product_id)).to.deep.equal(['p0', 'p1', 'p2']);
    } finally {
      await apiOnly.stop();
    }
  });

  it('refuses unknown commands and projections with usage', async () => {
    const bad = await tracking(app, 'projections', 'rebuild', 'nope');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('usage: tracking projections rebuild <leads|user-events|products|track-index|all>');
    const unknown = await tracking(app, 'frobnicate');
    expect(unknown.code).to.equal(2);
  });
});
