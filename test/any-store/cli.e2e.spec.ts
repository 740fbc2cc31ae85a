import { expect } from 'chai';
import { TestApp, type Credentials } from '../support/app.js';
import { tracking } from '../support/cli.js';
import { hostname } from 'node:os';
import { projectionStatus, type ProjectionsStatus } from '../../projections/runner/status.js';
import { instantText } from '../../src/cli/instant-text.js';
import { accountIdOf, accountsProjected, cursorsOf, smallWorkload } from '../support/account-replay.js';
import { eventually } from '../support/eventually.js';
import { expectSameReadModels, snapshot } from '../support/projection-harness.js';
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
    const createdAt = (JSON.parse((await tracking(app, 'accounts', 'list', '--json')).stdout) as { licenseCode: string; createdAt: string }[]).find(
      (a) => a.licenseCode === globex.licenseCode,
    )?.createdAt;
    expect(createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(listed.stdout.split('\n')).to.include(`${globex.licenseCode}  ${instantText(createdAt)}  Globex Corp`);

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
    const audit = JSON.parse(json.stdout) as {
      events: { type: string; recordedAt: string; metadata: { trackId: string } }[];
      streams: Record<string, { recordedAt: string }[]>;
    };
    expect(audit.events.map((e) => e.type)).to.deep.equal(['UserUpserted', 'ProfilesMerged']);
    expect(audit.events.every((e) => e.metadata.trackId === trackId)).to.equal(true);
    expect(Object.values(audit.streams)[0]).to.have.length(4);
    const recorded = [...text.stdout.matchAll(/ {2}recorded (.*)$/gm)].map((m) => m[1]);
    expect(recorded).to.deep.equal([...audit.events, ...(Object.values(audit.streams)[0] ?? [])].map((e) => instantText(e.recordedAt)));
    expect(recorded[0]).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);

    const unknown = await tracking(app, 'audit', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('unknown trackID');
  });

  it('shows the workers, the parts they hold and each projection caught up, as JSON and as text', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u1', attributes: {} }));
    await app.projected();
    // Each part's owner reports its accounts behind every 2 s: once all have, the text shows them.
    await eventually(async () => (await projectionStatus(app.pool, app.services.store)).parts.every((p) => p.accountsBehind === 0), 10_000, () => 'parts not reported');
    const status = await tracking(app, 'projections', 'status', '--json');
    expect(status.code, status.stderr).to.equal(0);
    const whole = JSON.parse(status.stdout) as ProjectionsStatus;
    expect(whole.projections.map((p) => p.projection)).to.deep.equal(['leads', 'user-events', 'products', 'track-index']);
    for (const p of whole.projections) expect(p.lagEvents, p.projection).to.equal(0);
    expect(whole.projections.find((p) => p.projection === 'leads')?.eventsApplied).to.equal(1);
    const worker = `${process.pid}@${hostname()}`;
    expect(whole.workers.map((w) => w.worker)).to.deep.equal([worker]);
    expect(whole.parts.every((p) => p.owner?.worker === worker)).to.equal(true);

    const text = await tracking(app, 'projections', 'status');
    expect(text.code, text.stderr).to.equal(0);
    const lines = text.stdout.split('\n');
    expect(lines).to.include('  leads: 1 event applied, updated ' + instantText(whole.projections[0]?.updatedAt ?? null));
    expect(lines).to.include('    lag: 0 events, 0.0 s, 0 accounts behind');
    expect(lines).to.include('Workers: 1 alive');
    const workerRow = lines.find((line) => line.startsWith(`  ${worker} `)) ?? '';
    expect(workerRow.trim().split(/\s{2,}/).slice(1, 3)).to.deep.equal([`16 (${whole.parts.map((p) => p.part).join(', ')})`, instantText(whole.workers[0]?.startedAt ?? null)]);
    expect(lines).to.include('Parts: 16 of 16 held');
    const part0 = lines.find((line) => /^ {2}0 {2}/.test(line)) ?? '';
    const [part, owner, epoch, leaseUntil, behind] = part0.trim().split(/\s{2,}/);
    expect([part, owner, epoch, behind]).to.deep.equal(['0', worker, String(whole.parts[0]?.epoch), '0']);
    // Renewed as it goes: a time within the lease (4 s) from now.
    expect(Date.parse((leaseUntil ?? '').replace(' UTC', 'Z'))).to.be.closeTo(Date.now(), 6_000);
    expect(lines).to.include('Accounts furthest behind: none, every account is caught up');
  });

  it('rebuilds a projection through the workers and reports the events replayed', async () => {
    for (let i = 0; i < 5; i += 1) queued(await app.ingest(account, 'users', { userId: `u${i}`, attributes: {} }));
    await app.projected();
    const before = await app.pool.query('SELECT to_jsonb(l) AS row FROM leads l ORDER BY profile_id');
    const rebuilt = await tracking(app, 'projections', 'rebuild', 'leads');
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stdout).to.match(/leads: rebuilt by the workers, 5 events replayed in [\d.]+ s/);
    const after = await app.pool.query('SELECT to_jsonb(l) AS row FROM leads l ORDER BY profile_id');
    expect(after.rows).to.deep.equal(before.rows);
  });

  it('rebuilds one account with --account (license code or id): its cursors are made again, its rows the same, another account untouched', async () => {
    const globex = await app.account('Globex');
    await smallWorkload(app, account, 'acme');
    await smallWorkload(app, globex, 'globex');
    const [acmeId, globexId] = [await accountIdOf(app, account), await accountIdOf(app, globex)];
    await accountsProjected(app, [acmeId, globexId]);
    const rows = await snapshot(app.pool);
    const [acmeCursors, globexCursors] = [await cursorsOf(app.pool, acmeId), await cursorsOf(app.pool, globexId)];
    expect(acmeCursors).to.have.length(4);

    const rebuilt = await tracking(app, 'projections', 'rebuild', 'all', '--account', account.licenseCode);
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stdout).to.match(new RegExp(`^account ${account.licenseCode} \\(Acme\\): leads, user-events, products, track-index rebuilt by the workers in [\\d.]+ s\\n$`));
    expectSameReadModels(await snapshot(app.pool), rows, 'after the rebuild of one account');
    // Replayed: each of its cursors was made again and caught up; the other account's never moved.
    const remade = await cursorsOf(app.pool, acmeId);
    expect(remade.map((c) => [c.projection, c.checkpoint, c.events_applied])).to.deep.equal(acmeCursors.map((c) => [c.projection, c.checkpoint, c.events_applied]));
    remade.forEach((cursor, i) => expect(cursor.caught_up_at?.getTime(), cursor.projection).to.be.above(acmeCursors[i]?.caught_up_at?.getTime() ?? Infinity));
    expect(await cursorsOf(app.pool, globexId)).to.deep.equal(globexCursors);

    // By account id, one projection, as JSON.
    const byId = await tracking(app, 'projections', 'rebuild', 'products', '--account', globexId, '--json');
    expect(byId.code, byId.stderr).to.equal(0);
    expect(JSON.parse(byId.stdout)).to.include({ accountId: globexId, licenseCode: globex.licenseCode, ranHere: false }).and.have.deep.property('projections', ['products']);
    const globexAfter = await cursorsOf(app.pool, globexId);
    expect(globexAfter.filter((c) => c.projection !== 'products')).to.deep.equal(globexCursors.filter((c) => c.projection !== 'products'));
    expectSameReadModels(await snapshot(app.pool), rows, 'after the rebuild of one projection of one account');
  });

  it('refuses --account without a value, with another action, or naming no account, and changes nothing then', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u1', attributes: {} }));
    await accountsProjected(app, [await accountIdOf(app, account)]);
    // What a rebuild would reset: the cursors' rows and their counts. (A worker may still note the
    // account caught up, moving a cursor's times and checkpoint past events of other types.)
    const applied = async () => (await cursorsOf(app.pool, await accountIdOf(app, account))).map((c) => [c.projection, c.events_applied]);
    const cursors = await applied();
    const missing = await tracking(app, 'projections', 'rebuild', 'leads', '--account');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain("Option '--account <value>' argument missing").and.contain('projections rebuild <name|all> [--account <license|id>]');
    const onRetry = await tracking(app, 'projections', 'retry', 'leads', '--account', account.licenseCode);
    expect(onRetry.code).to.equal(2);
    expect(onRetry.stderr).to.contain('--account is for rebuild only');
    // An account named without --account would rebuild every account: refused.
    const positional = await tracking(app, 'projections', 'rebuild', 'leads', account.licenseCode);
    expect(positional.code).to.equal(2);
    expect(positional.stderr).to.contain(`unexpected ${account.licenseCode}`);
    const unknown = await tracking(app, 'projections', 'rebuild', 'leads', '--account', 'ffffffffffffffffffffffff');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no account with the license code or id ffffffffffffffffffffffff');
    expect(await applied()).to.deep.equal(cursors);
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

      // One account too, with no worker alive: replayed here, and the worker started for it stops.
      queued(await apiOnly.ingest(acct, 'products', { productId: 'p3', properties: {} }));
      const one = await tracking(apiOnly, 'projections', 'rebuild', 'products', '--account', acct.licenseCode);
      expect(one.code, one.stderr).to.equal(0);
      expect(one.stdout).to.match(/: products rebuilt in this process in [\d.]+ s/);
      const again = await apiOnly.pool.query('SELECT product_id FROM products ORDER BY product_id');
      expect(again.rows.map((r: { product_id: string }) => r.product_id)).to.deep.equal(['p0', 'p1', 'p2', 'p3']);
      const status = await tracking(apiOnly, 'projections', 'status');
      expect(status.stdout).to.contain('Workers: none alive').and.contain('Parts: 0 of 16 held');
    } finally {
      await apiOnly.stop();
    }
  });

  it('refuses unknown commands and projections with usage', async () => {
    const bad = await tracking(app, 'projections', 'rebuild', 'nope');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('usage: tracking projections rebuild <leads|user-events|products|track-index|all> [--account <license code|account id>]');
    const unknown = await tracking(app, 'frobnicate');
    expect(unknown.code).to.equal(2);
  });
});
