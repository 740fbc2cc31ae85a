import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import type { ErasureStep } from '../../src/erasure/runner.js';
import { TestApp, type Credentials, type Reply } from '../support/app.js';
import { until } from '../support/eventually.js';
import { capturedLog } from '../support/log-lines.js';
import { erasureDone, everythingKept } from '../support/erasures.js';
import { rebuildAllProjections } from '../support/projections.js';
import { queued } from '../support/replies.js';

/** The steps of the runner's first round at which a merge into the erased user is sent. */
const mergeSteps: ErasureStep[] = ['claimed', 'suppressed', 'keys-erased', 'settled', 'keys-erased-again', 'rebuilt', 'refusals-deleted', 'vacuumed', 'deciding'];

/** What an anonymous visitor sent before being merged: none of it may stay once the user is erased. */
const secretOf = (anonymousId: string): { attribute: string; event: string } => ({ attribute: `attr-secret-${anonymousId}`, event: `event-secret-${anonymousId}` });

describe('erasure and merges, however they interleave (e2e, on the store under test)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let other: TestApp | null = null;
  let acme: Credentials;
  let globex: Credentials;
  let log: ReturnType<typeof capturedLog>;

  beforeEach(async () => {
    log = capturedLog('debug');
    app = await TestApp.start({}, { projections: true, log: log.log });
    acme = await app.account('Acme');
    globex = await app.account('Globex');
  });
  afterEach(async () => {
    app.services.erasures.onStep(null);
    await other?.stop();
    other = null;
    await app.stop();
  });

  const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
  const lead = (account: Credentials, id: string): Promise<Reply<Record<string, unknown>>> => app.get(`/admin/v1/accounts/${account.licenseCode}/leads/${id}`, bearer(account));
  const everything = (): Promise<string> => everythingKept(app, log);

  async function visitor(account: Credentials, anonymousId: string): Promise<void> {
    const secret = secretOf(anonymousId);
    queued(await app.ingest(account, 'users', { anonymousId, attributes: { note: secret.attribute } }));
    queued(await app.ingest(account, 'events', { anonymousId, eventName: 'visit', eventData: { note: secret.event } }));
  }

  async function merge(via: TestApp, account: Credentials, userId: string, anonymousId: string): Promise<void> {
    queued(await via.ingest(account, 'users', { userId, anonymousId, attributes: {} }));
  }

  const erasedDone = (account: Credentials, body: unknown): Promise<Erasure> => erasureDone(app, account, body, 150_000);

  it('erases every id merged into the user before the erasure is done: before it, at each step of the runner, and from another process', async () => {
    const ids = ['anon-before', 'anon-other-process', ...mergeSteps.map((step) => `anon-at-${step}`)];
    queued(await app.ingest(acme, 'users', { userId: 'u-1', email: 'u1.secret@example.com', attributes: {} }));
    for (const id of ids) await visitor(acme, id);
    // Another account's person with the same ids stays as it is.
    queued(await app.ingest(globex, 'users', { userId: 'u-1', email: 'globex.keeps@example.com', attributes: {} }));
    queued(await app.ingest(globex, 'users', { anonymousId: 'anon-at-settled', attributes: { note: 'globex-keeps-attr' } }));
    await merge(app, globex, 'u-1', 'anon-at-settled');
    await merge(app, acme, 'u-1', 'anon-before');
    await app.projected();
    const before = await everything();
    for (const id of ids) expect(before).to.contain(secretOf(id).attribute).and.contain(secretOf(id).event);

    // Another process of the service on the same database, whose runner is not running: its merge goes through its own identity map claim.
    other = await TestApp.start({}, { database: app.database });
    await other.services.erasures.stop();
    const seen = new Set<ErasureStep>();
    app.services.erasures.onStep(async (step) => {
      if (seen.has(step)) return;
      seen.add(step);
      if (mergeSteps.includes(step)) await merge(app, acme, 'u-1', `anon-at-${step}`);
      if (step === 'keys-erased') await merge(other as TestApp, acme, 'u-1', 'anon-other-process');
    });
    const erasure = await erasedDone(acme, { userId: 'u-1' });
    // The status reads done once the decision commits; the runner reaches its 'done' step after the vacuum that follows.
    await until(() => seen.has('done'), 60_000, () => `the runner's steps: ${[...seen].join(', ')}`);
    expect([...seen]).to.include.members(mergeSteps);
    expect(erasure.counts?.keys).to.be.at.least(ids.length + 1);

    for (const id of ['u-1', ...ids]) expect((await lead(acme, id)).status, id).to.equal(404);
    const after = await everything();
    for (const id of ids) expect(after, id).not.to.contain(secretOf(id).attribute).and.not.to.contain(secretOf(id).event);
    expect(after).not.to.contain('u1.secret@example.com');
    expect((await lead(globex, 'u-1')).body).to.include({ email: 'globex.keeps@example.com' });
    expect(after).to.contain('globex-keeps-attr');

    await rebuildAllProjections(app);
    for (const id of ['u-1', ...ids]) expect((await lead(acme, id)).status, id).to.equal(404);
    const rebuilt = await everything();
    for (const id of ids) expect(rebuilt, id).not.to.contain(secretOf(id).attribute).and.not.to.contain(secretOf(id).event);
  });

  it('leaves a merge sent after the erasure is done to the user met again: a new person, whose data stays readable', async () => {
    await visitor(acme, 'anon-late');
    queued(await app.ingest(acme, 'users', { userId: 'u-2', email: 'first@example.com', attributes: {} }));
    await app.projected();
    await erasedDone(acme, { userId: 'u-2' });
    await merge(app, acme, 'u-2', 'anon-late');
    await app.projected();
    const merged = await lead(acme, 'u-2');
    expect(merged.status).to.equal(200);
    expect(JSON.stringify(merged.body)).to.contain(secretOf('anon-late').attribute);
    expect(JSON.stringify(merged.body)).not.to.contain('first@example.com');
  });

  it('keeps the profile of a merge repeated after the erasure (a browser identifying again): the user met again', async () => {
    await visitor(acme, 'anon-again');
    queued(await app.ingest(acme, 'users', { userId: 'u-3', anonymousId: 'anon-again', email: 'before@example.com', attributes: {} }));
    await app.projected();
    await erasedDone(acme, { userId: 'u-3' });
    queued(await app.ingest(acme, 'users', { userId: 'u-3', anonymousId: 'anon-again', email: 'again@example.com', attributes: {} }));
    await app.projected();
    const again = await lead(acme, 'u-3');
    expect(again.status).to.equal(200);
    expect(again.body).to.include({ email: 'again@example.com' });
    const text = await everything();
    expect(text).not.to.contain('before@example.com').and.not.to.contain(secretOf('anon-again').attribute);
  });
});
