import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import { instantText } from '../../src/cli/instant-text.js';
import { TestApp, type Credentials } from '../support/app.js';
import { tracking, type CliResult } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { queued, uuidPattern } from '../support/replies.js';

const doneLine = /^erasure ([0-9a-f-]{36}) done in \d+\.\d s: (.*) erased$/;

describe('tracking erase and tracking erasures (e2e)', function () {
  this.timeout(90_000);
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    app = await TestApp.start({}, { projections: true });
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  const lead = (id: string): Promise<number> =>
    app.get(`/admin/v1/accounts/${account.licenseCode}/leads/${id}`, `Bearer ${account.accessToken}`).then((reply) => reply.status);

  /** u-1's profile with an email and one event, projected: a lead and two indexed events. Returns the event's trackID. */
  async function person(userId = 'u-1'): Promise<string> {
    queued(await app.ingest(account, 'users', { userId, email: `${userId}@example.com`, attributes: {} }));
    const trackId = queued(await app.ingest(account, 'events', { userId, eventName: 'signup', eventData: { plan: 'secret-plan' } }));
    await app.projected();
    expect(await lead(userId)).to.equal(200);
    return trackId;
  }

  async function listed(): Promise<Erasure[]> {
    const result = await tracking(app, 'erasures', '--account', account.licenseCode, '--json');
    expect(result.code, result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as Erasure[];
  }

  const ok = (result: CliResult): CliResult => {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
    return result;
  };

  it('erases a person and waits while the service runs erasures too; --no-wait leaves the request to the service', async () => {
    const trackId = await person();
    const erased = ok(await tracking(app, 'erase', '--account', account.licenseCode, '--user', 'u-1'));
    const [, id, counts] = doneLine.exec(erased.stdout.trim()) ?? [];
    expect(id, erased.stdout).to.match(uuidPattern);
    expect(counts).to.equal('1 key, 2 events, 1 lead, 0 refused items, 0 replies');
    expect(await lead('u-1')).to.equal(404);
    // The auditor's replay: the event, which erasure took its data and when; not the data.
    const audit = ok(await tracking(app, 'audit', trackId));
    expect(audit.stdout).to.contain(`erased by erasure ${id} at `).and.contain('"eventName":""');
    expect(audit.stdout).not.to.contain('secret-plan');

    const [erasure] = await listed();
    // Done, it keeps the pseudonym of the id, not the id (docs/decisions.md, Ids kept as pseudonyms).
    expect(erasure).to.deep.include({ id, userId: null, anonymousId: null, anonymousRef: null, suppress: false, requestedBy: 'cli', state: 'done', error: null });
    expect(erasure?.userRef).to.be.a('string').and.not.to.contain('u-1');
    expect(erasure?.counts).to.deep.equal({ keys: 1, events: 2, leads: 1, rejectedItems: 0, idempotencyReplies: 0 });

    // Nothing waits here: the service's runner carries the request out.
    await person('u-2');
    const requested = ok(await tracking(app, 'erase', '--account', account.licenseCode, '--user', 'u-2', '--anonymous', 'anon-2', '--suppress', '--no-wait'));
    const [, pendingId] = /^erasure (\S+) pending: /.exec(requested.stdout) ?? [];
    expect(pendingId, requested.stdout).to.match(uuidPattern);
    const later = await eventually(
      async () => (await listed()).find((e) => e.id === pendingId && e.state === 'done'),
      60_000,
      () => `erasure ${pendingId} never finished`,
    );
    expect(later).to.deep.include({ userId: null, anonymousId: null, suppress: true, requestedBy: 'cli' });
    expect(await lead('u-2')).to.equal(404);
    // The service refuses the suppressed id's new items.
    expect((await app.ingest(account, 'users', { userId: 'u-2', attributes: {} })).status).to.equal(400);

    // The latest first, as a table.
    const table = ok(await tracking(app, 'erasures', '--account', account.licenseCode));
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^id +state +who +requested +done +erased$/);
    expect(lines[1])
      .to.contain(pendingId)
      .and.contain('done')
      .and.contain(`user (pseudonym ${String(later.userRef)}) + anonymous (pseudonym ${String(later.anonymousRef)}) (suppressed)`)
      .and.contain(instantText(later.doneAt));
    expect(lines[2]).to.contain(id).and.contain(`user (pseudonym ${String(erasure?.userRef)})`).and.contain(instantText(erasure?.requestedAt)).and.contain(counts);
    expect(table.stdout).not.to.contain('u-1').and.not.to.contain('anon-2');
    expect((await listed()).map((e) => e.id)).to.deep.equal([pendingId, id]);
    const first = ok(await tracking(app, 'erasures', '--account', account.licenseCode, '--limit', '1'));
    expect(first.stdout).to.contain(pendingId).and.contain('--limit for more');
    expect(first.stdout).not.to.contain(id);
  });

  it('carries the erasure out itself when no service process runs erasures', async () => {
    await app.services.erasures.stop();
    await person();
    const erased = ok(await tracking(app, 'erase', '--account', account.licenseCode, '--user', 'u-1', '--json'));
    const erasure = JSON.parse(erased.stdout) as Erasure;
    expect(erasure).to.deep.include({ userId: null, requestedBy: 'cli', state: 'done', error: null });
    expect(erasure.counts).to.deep.equal({ keys: 1, events: 2, leads: 1, rejectedItems: 0, idempotencyReplies: 0 });
    expect(await lead('u-1')).to.equal(404);
    expect((await listed()).map((e) => e.id)).to.deep.equal([erasure.id]);
  });

  it('refuses an unknown account, an id that is no identity, and a request without an id, recording nothing', async () => {
    const unknown = await tracking(app, 'erase', '--account', 'ffffffffffffffffffffffff', '--user', 'u-1');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no account with the license code or id ffffffffffffffffffffffff');
    const unknownList = await tracking(app, 'erasures', '--account', 'ffffffffffffffffffffffff');
    expect(unknownList.code).to.equal(1);
    expect(unknownList.stderr).to.contain('no account with the license code or id');

    const placeholder = await tracking(app, 'erase', '--account', account.licenseCode, '--user', 'undefined');
    expect(placeholder.code).to.equal(1);
    expect(placeholder.stderr).to.contain("userId 'undefined' is a placeholder, not an identity");
    const tooLong = await tracking(app, 'erase', '--account', account.licenseCode, '--anonymous', 'a'.repeat(256));
    expect(tooLong.code).to.equal(1);
    expect(tooLong.stderr).to.contain('anonymousId');

    const noId = await tracking(app, 'erase', '--account', account.licenseCode);
    expect(noId.code).to.equal(2);
    expect(noId.stderr).to.contain('usage: tracking erase');
    expect(await listed()).to.deep.equal([]);
    const empty = ok(await tracking(app, 'erasures', '--account', account.licenseCode));
    expect(empty.stdout.trim()).to.equal('no erasures');
  });
});
