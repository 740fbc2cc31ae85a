import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import type { Warning, WarningGroup } from '../../src/activity/queries.js';
import { TestApp, type Credentials, type Reply } from '../support/app.js';
import { databaseText } from '../support/database-text.js';
import { eventually } from '../support/eventually.js';
import { capturedLog } from '../support/log-lines.js';
import { queued } from '../support/replies.js';

/** Values the refused items carry: none may be kept where the rules say the item is not. */
const secrets = {
  suppressedSingle: 'suppressed-secret-5531',
  suppressedBulk: 'suppressed-secret-8820',
  suppressedEmail: 'suppressed.secret@example.com',
  pendingUser: 'pending-secret-1177',
  pendingMerged: 'pending-secret-2288',
  pendingBulk: 'pending-secret-3399',
  pendingMessage: 'pending-secret-4400',
};

type ItemReply = { response: { status: string; message?: string } };
type BulkItemReply = { response: { status: string; message?: string }[] };

const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
const badTime = (ids: Record<string, string>, note: string): Record<string, unknown> => ({ ...ids, eventName: 'visit', eventTime: 'not a time', eventData: { note } });

describe('refused items naming erased people (e2e, on the store under test)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let acme: Credentials;
  let globex: Credentials;
  let log: ReturnType<typeof capturedLog>;

  const recent = async (account: Credentials, query = ''): Promise<Warning[]> =>
    (await app.get<{ warnings: Warning[] }>(`/admin/v1/accounts/${account.licenseCode}/warnings/recent?limit=100${query}`, bearer(account))).body.warnings;
  /** The hourly count of reason, field and endpoint (the warnings' groups). */
  let lastGroups: WarningGroup[] = [];
  const counted = async (account: Credentials, reason: string, field: string, endpoint: string): Promise<number> => {
    lastGroups = (await app.get<{ groups: WarningGroup[] }>(`/admin/v1/accounts/${account.licenseCode}/warnings`, bearer(account))).body.groups;
    return lastGroups.find((g) => g.reason === reason && g.field === field && g.endpoint === endpoint)?.count ?? 0;
  };
  /** Waits until the hourly counts hold `count` (written with the items, in one transaction). */
  const countedTo = (account: Credentials, reason: string, field: string, endpoint: string, count: number): Promise<true> =>
    eventually(
      async () => (await counted(account, reason, field, endpoint)) === count,
      10_000,
      () => `${reason}/${field}/${endpoint} never counted ${count}: ${lastGroups.map((g) => `${g.reason}/${g.field}/${g.endpoint} ${g.count}`).join(', ')}`,
    );
  /** Every place the service keeps or writes anything: its database, the EventStoreDB it writes to, its log. */
  const everything = async (): Promise<string> => `${await databaseText(app.pool)}\n${app.esdbDouble()?.storedText() ?? ''}\n${log.written()}`;

  describe('with the erasure runner', () => {
    beforeEach(async () => {
      log = capturedLog('debug');
      app = await TestApp.start({}, { projections: true, log: log.log });
      acme = await app.account('Acme');
    });
    afterEach(() => app.stop());

    const eraseAndWait = async (body: Record<string, unknown>): Promise<Erasure> => {
      const requested = await app.request<Erasure>('POST', `/v1/accounts/${acme.licenseCode}/erasures`, body, { authorization: bearer(acme) });
      expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
      return eventually(
        async () => {
          const reply = await app.get<Erasure>(`/v1/accounts/${acme.licenseCode}/erasures/${requested.body.id}`, bearer(acme));
          return reply.body.state === 'done' ? reply.body : undefined;
        },
        60_000,
        () => `erasure ${requested.body.id} never finished`,
      );
    };

    it('keeps a suppressed person’s refusals after the erasure without their excerpt, and counts them', async () => {
      queued(await app.ingest(acme, 'events', { userId: 'user-suppressed', eventName: 'visit' }));
      await eraseAndWait({ userId: 'user-suppressed', suppress: true });

      const single: Reply<ItemReply> = await app.ingest(acme, 'events', { userId: 'user-suppressed', eventName: 'visit', eventData: { note: secrets.suppressedSingle } });
      expect(single.status).to.equal(400);
      expect(single.body.response.message).to.match(/^userId is suppressed/);
      const bulk: Reply<BulkItemReply> = await app.ingest(acme, 'events/bulk', [
        { userId: 'user-suppressed', eventName: 'visit', eventData: { note: secrets.suppressedBulk } },
        { userId: 'user-other', eventName: 'visit' },
      ]);
      expect(bulk.status).to.equal(200);
      expect(bulk.body.response.map((r) => r.status)).to.deep.equal(['error', 'queued']);
      const profile: Reply<ItemReply> = await app.ingest(acme, 'users', { userId: 'user-suppressed', email: secrets.suppressedEmail, attributes: {} });
      expect(profile.status).to.equal(400);

      await countedTo(acme, 'suppressed', 'userId', 'events', 1);
      await countedTo(acme, 'suppressed', 'userId', 'events/bulk', 1);
      await countedTo(acme, 'suppressed', 'userId', 'users', 1);
      const refusals = await recent(acme, '&reason=suppressed');
      expect(refusals.map((w) => [w.endpoint, w.field, w.status])).to.deep.equal([
        ['users', 'userId', 400],
        ['events/bulk', 'userId', 200],
        ['events', 'userId', 400],
      ]);
      for (const refusal of refusals) {
        expect(refusal.excerpt).to.equal(null);
        expect(refusal.truncated).to.equal(false);
        expect(refusal.message).to.match(/^userId is suppressed/).and.not.contain('user-suppressed');
      }

      const kept = await everything();
      expect(kept).to.contain('userId is suppressed');
      for (const value of [secrets.suppressedSingle, secrets.suppressedBulk, secrets.suppressedEmail]) expect(kept, value).not.to.contain(value);
    });

    it('keeps a refused item naming an erased, unsuppressed id once the erasure is done: a new person', async () => {
      queued(await app.ingest(acme, 'users', { userId: 'user-back', anonymousId: 'anon-back', attributes: {} }));
      await eraseAndWait({ userId: 'user-back' });

      expect((await app.ingest(acme, 'events', badTime({ userId: 'user-back' }, 'back-note-6612'))).status).to.equal(400);
      expect((await app.ingest(acme, 'events', badTime({ anonymousId: 'anon-back' }, 'back-note-7723'))).status).to.equal(400);
      await countedTo(acme, 'schema', 'eventTime', 'events', 2);
      const excerpts = (await recent(acme, '&reason=schema')).map((w) => w.excerpt ?? '');
      expect(excerpts).to.have.length(2);
      expect(excerpts[0]).to.contain('"anon-back"').and.contain('back-note-7723');
      expect(excerpts[1]).to.contain('"user-back"').and.contain('back-note-6612');
    });
  });

  describe('while an erasure is pending (no runner takes it)', () => {
    let acmeId: string;
    let erasureId: string;

    beforeEach(async () => {
      log = capturedLog('debug');
      app = await TestApp.start({}, { erasureRunner: false, log: log.log });
      acme = await app.account('Acme');
      globex = await app.account('Globex');
      acmeId = (await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [acme.licenseCode])).rows[0]?.id as string;
      // user-p, with anon-p merged into them, then their erasure, requested: no runner takes it, so it stays pending.
      queued(await app.ingest(acme, 'users', { userId: 'user-p', anonymousId: 'anon-p', attributes: {} }));
      const merges = await app.pool.query('SELECT 1 FROM identity_merges WHERE account_id = $1 AND anonymous_id = $2 AND user_id = $3', [acmeId, 'anon-p', 'user-p']);
      expect(merges.rowCount).to.equal(1);
      const requested = await app.request<Erasure>('POST', `/v1/accounts/${acme.licenseCode}/erasures`, { userId: 'user-p' }, { authorization: bearer(acme) });
      expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
      erasureId = requested.body.id;
    });
    afterEach(() => app.stop());

    it('does not keep a refused item naming its user or an anonymousId merged into them, in the excerpt or the message; counts it; keeps another account’s', async () => {
      expect((await app.ingest(acme, 'events', badTime({ userId: 'user-p' }, secrets.pendingUser))).status).to.equal(400);
      expect((await app.ingest(acme, 'events', badTime({ anonymousId: 'anon-p' }, secrets.pendingMerged))).status).to.equal(400);
      const bulk: Reply<BulkItemReply> = await app.ingest(acme, 'events/bulk', [badTime({ userId: 'user-p' }, secrets.pendingBulk), badTime({ userId: 'user-other' }, 'other-note-1010')]);
      expect(bulk.body.response.map((r) => r.status)).to.deep.equal(['error', 'error']);
      // The body names anon-p escaped (so not as the JSON string "anon-p"); the message quotes it, and user-p.
      const conflict: Reply<ItemReply> = await app.ingest(acme, 'users', undefined, {
        raw: `{"userId":"user-x","anonymousId":"anon\\u002dp","attributes":{"note":"${secrets.pendingMessage}"}}`,
      });
      expect(conflict.status).to.equal(400);
      expect(conflict.body.response.message).to.contain(`'anon-p'`).and.contain(`'user-p'`);
      // Another account's user-p is not being erased.
      expect((await app.ingest(globex, 'events', badTime({ userId: 'user-p' }, 'globex-note-2020'))).status).to.equal(400);

      await countedTo(acme, 'schema', 'eventTime', 'events', 2);
      await countedTo(acme, 'schema', 'eventTime', 'events/bulk', 2);
      await countedTo(acme, 'merge_conflict', 'anonymousId', 'users', 1);
      await countedTo(globex, 'schema', 'eventTime', 'events', 1);
      const acmeKept = await recent(acme);
      expect(acmeKept.map((w) => w.excerpt)).to.deep.equal([JSON.stringify(badTime({ userId: 'user-other' }, 'other-note-1010'))]);
      const globexKept = await recent(globex);
      expect(globexKept).to.have.length(1);
      expect(globexKept[0]?.excerpt).to.contain('"user-p"').and.contain('globex-note-2020');

      const kept = await everything();
      for (const value of [secrets.pendingUser, secrets.pendingMerged, secrets.pendingBulk, secrets.pendingMessage]) expect(kept, value).not.to.contain(value);
      expect(kept).to.contain('other-note-1010').and.contain('globex-note-2020');
      expect((await app.get<Erasure>(`/v1/accounts/${acme.licenseCode}/erasures/${erasureId}`, bearer(acme))).body.state).to.equal('pending');
    });

    it('keeps them again once it is done: a person met after it is a new person', async () => {
      await app.pool.query(`UPDATE erasures SET state = 'done', done_at = clock_timestamp(), counts = '{}' WHERE id = $1`, [erasureId]);
      expect((await app.ingest(acme, 'events', badTime({ userId: 'user-p' }, 'new-person-3030'))).status).to.equal(400);
      expect((await app.ingest(acme, 'events', badTime({ anonymousId: 'anon-p' }, 'new-person-4040'))).status).to.equal(400);

      await countedTo(acme, 'schema', 'eventTime', 'events', 2);
      const excerpts = (await recent(acme)).map((w) => w.excerpt ?? '');
      expect(excerpts).to.have.length(2);
      expect(excerpts[0]).to.contain('"anon-p"').and.contain('new-person-4040');
      expect(excerpts[1]).to.contain('"user-p"').and.contain('new-person-3030');
    });
  });
});
