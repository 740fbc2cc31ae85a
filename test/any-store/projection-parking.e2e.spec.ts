import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { leadsProjection } from '../../projections/leads/projection.js';
import { rebuildProjections } from '../../projections/runner/rebuild.js';
import type { ProjectionStatus, ProjectionsStatus } from '../../projections/runner/status.js';
import { createLogger } from '../../src/logger.js';
import { TestApp, type Credentials } from '../support/app.js';
import { asAdmin } from '../support/database.js';
import { tracking } from '../support/cli.js';
import { accountRefs } from '../support/id-refs.js';
import { capturedLog } from '../support/log-lines.js';
import { sample } from '../support/metrics.js';
import { queued } from '../support/replies.js';

async function accountIdOf(app: TestApp, account: Credentials): Promise<string> {
  const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
  return rows[0]?.id as string;
}

/**
 * A profile whose birth date instant PostgreSQL cannot hold (past year 9999), stored through the
 * event store port as an older ingest would have: the leads projection cannot apply it.
 */
async function storePoisonProfile(app: TestApp, account: Credentials, userId: string): Promise<string> {
  const accountId = await accountIdOf(app, account);
  const id = randomUUID();
  await app.services.store.append([
    {
      id,
      // Named as the service names a user's stream: by the pseudonym of the userId.
      stream: `user-${accountId}-${(await accountRefs(app, accountId)).user(userId)}`,
      type: 'UserUpserted',
      data: {
        userId,
        profile: { birth_date: '9999-12-31T23:59:59-2359' },
        attributes: {},
        attributeTypes: {},
        instants: { birth_date: '+010000-01-01T23:58:59.000Z' },
      },
      metadata: { trackId: id, accountId, receivedAt: new Date().toISOString(), schemaVersion: 1 },
    },
  ]);
  return id;
}

async function status(app: TestApp, projection: string): Promise<ProjectionStatus> {
  const listed = await tracking(app, 'projections', 'status', '--json');
  expect(listed.code, listed.stderr).to.equal(0);
  const found = (JSON.parse(listed.stdout) as ProjectionsStatus).projections.find((s) => s.projection === projection);
  if (!found) throw new Error(`no status for ${projection}`);
  return found;
}

const parkedIds = async (app: TestApp, projection: string): Promise<string[]> =>
  (await app.pool.query<{ event_id: string }>('SELECT event_id FROM projection_parked_events WHERE projection = $1 ORDER BY parked_order', [projection])).rows.map(
    (r) => r.event_id,
  );

describe('events a projection cannot apply are parked (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let acme: Credentials;
  let globex: Credentials;

  afterEach(() => app.stop());

  describe('with the workers running', () => {
    let log: ReturnType<typeof capturedLog>;
    beforeEach(async () => {
      log = capturedLog('debug');
      app = await TestApp.start({}, { projections: true, log: log.log });
      acme = await app.account('Acme');
      globex = await app.account('Globex');
    });

    it("parks a profile PostgreSQL cannot hold while another account's later profile reaches Leads; status and metrics show it", async () => {
      const poison = await storePoisonProfile(app, acme, 'poisoned');
      queued(await app.ingest(globex, 'users', { userId: 'later', attributes: {} }));
      await app.projected();

      const later = await app.get<{ userId: string }>(`/admin/v1/accounts/${globex.licenseCode}/leads/later`, `Bearer ${globex.accessToken}`);
      expect(later.status).to.equal(200);
      const poisoned = await app.get(`/admin/v1/accounts/${acme.licenseCode}/leads/poisoned`, `Bearer ${acme.accessToken}`);
      expect(poisoned.status).to.equal(404);

      const leads = await status(app, 'leads');
      expect(leads.parked.events).to.equal(1);
      expect(leads.parked.latest[0]).to.include({ eventId: poison, eventType: 'UserUpserted', accountId: await accountIdOf(app, acme), attempts: 1 });
      expect(leads.parked.latest[0]?.sqlstate).to.match(/^22/);
      expect(leads.eventsApplied).to.equal(1);
      expect((await status(app, 'track-index')).parked.events).to.equal(0);
      const text = await tracking(app, 'projections', 'status');
      expect(text.stdout).to.contain('parked: 1 event it could not apply').and.contain(`UserUpserted ${poison}`).and.contain('out of range');

      const page = (await app.request<string>('GET', '/metrics')).body;
      expect(sample(page, 'tracking_projection_events_parked_total', 'projection="leads"')).to.equal(1);
      expect(sample(page, 'tracking_projection_parked_events', 'projection="leads"')).to.equal(1);

      // Nothing fixed: a retry leaves it parked, one attempt more.
      const retried = await tracking(app, 'projections', 'retry', 'leads', '--json');
      expect(retried.code, retried.stderr).to.equal(0);
      expect(JSON.parse(retried.stdout)).to.deep.equal({ projection: 'leads', retried: 1, applied: 0, stillParked: 1 });
      expect((await status(app, 'leads')).parked.latest[0]?.attempts).to.equal(2);
    });

    it('applies a parked event again once its cause is fixed (a constraint dropped), and unparks it', async () => {
      queued(await app.ingest(acme, 'users', { userId: 'u1', attributes: {} }));
      await app.pool.query("ALTER TABLE user_events ADD CONSTRAINT no_blocked_events CHECK (event_name <> 'blocked')");
      queued(await app.ingest(acme, 'events', { userId: 'u1', eventName: 'blocked' }));
      queued(await app.ingest(globex, 'events', { userId: 'u2', eventName: 'after' }));
      await app.projected();
      const names = async (): Promise<string[]> =>
        (await app.pool.query<{ event_name: string }>('SELECT event_name FROM user_events ORDER BY global_position')).rows.map((r) => r.event_name);
      expect(await names()).to.deep.equal(['after']);
      const parked = await status(app, 'user-events');
      expect(parked.parked.events).to.equal(1);
      expect(parked.parked.latest[0]?.sqlstate).to.equal('23514');
      // PostgreSQL's detail of the error holds the row's values (the client's data): neither the
      // log nor the parked table keeps it, only the SQLSTATE and the message naming the constraint.
      const warning = log.lines.find((line) => line.msg === 'event parked: the projection cannot apply it');
      expect(warning).to.include({ sqlstate: '23514', reason: 'new row for relation "user_events" violates check constraint "no_blocked_events"' });
      expect(log.written()).to.contain('violates check constraint').and.not.contain('Failing row contains');
      const { rows } = await app.pool.query<{ error: string }>('SELECT error FROM projection_parked_events');
      expect(rows.map((row) => row.error)).to.deep.equal(['new row for relation "user_events" violates check constraint "no_blocked_events"']);
      const failedAgain = await tracking(app, 'projections', 'retry', 'user-events');
      expect(failedAgain.stderr).to.contain('parked event failed again').and.contain('23514').and.not.contain('Failing row contains');

      await app.pool.query('ALTER TABLE user_events DROP CONSTRAINT no_blocked_events');
      const retried = await tracking(app, 'projections', 'retry', 'all');
      expect(retried.code, retried.stderr).to.equal(0);
      expect(retried.stdout).to.contain('user-events: 1 parked events retried, 1 applied, 0 still parked');
      expect(await names()).to.have.members(['after', 'blocked']);
      const after = await status(app, 'user-events');
      expect(after.parked.events).to.equal(0);
      expect(after.eventsApplied).to.equal(2);
      const timeline = await app.get<{ events: { eventName: string }[] }>(`/admin/v1/accounts/${acme.licenseCode}/leads/u1/events`, `Bearer ${acme.accessToken}`);
      expect(timeline.body.events.map((e) => e.eventName)).to.deep.equal(['blocked']);
    });

    it('parks nothing when the worker loses its connection in the middle of a batch: the batch is applied later, once', async () => {
      await asAdmin(async (client) => {
        const locker = await import('pg').then(({ default: pg }) => new pg.Client({ connectionString: app.database.url }));
        await locker.connect();
        try {
          // The worker's insert waits behind this lock (SHARE: no transaction id, so the catch-up
          // read is not held back by it); its session is then ended under it.
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE user_events IN SHARE MODE');
          queued(await app.ingest(acme, 'events', { userId: 'u1', eventName: 'during' }));
          const waiting = async (): Promise<number[]> =>
            (
              await client.query<{ pid: number }>(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'tracking-projection %' AND wait_event_type = 'Lock'",
                [app.database.name],
              )
            ).rows.map((r) => r.pid);
          let pids = await waiting();
          for (let i = 0; pids.length === 0 && i < 500; i += 1) pids = await waiting();
          expect(pids).to.have.length(1);
          await client.query('SELECT pg_terminate_backend($1)', [pids[0]]);
        } finally {
          await locker.query('ROLLBACK');
          await locker.end();
        }
      });
      await app.projected(15_000);
      const { rows } = await app.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM user_events WHERE event_name = 'during'");
      expect(rows[0]?.n).to.equal(1);
      expect(await parkedIds(app, 'user-events')).to.deep.equal([]);
      expect((await status(app, 'user-events')).parked.events).to.equal(0);
    });
  });

  describe('in one large batch', () => {
    beforeEach(async () => {
      app = await TestApp.start();
      acme = await app.account('Acme');
      globex = await app.account('Globex');
    });

    it('finds the one poison event among many by splitting the batch, applies every other event once, and a rebuild parks the same event', async () => {
      const poisons: string[] = [];
      for (let round = 0; round < 10; round += 1) {
        for (const [account, userId] of [[acme, 'ann'], [globex, 'bob'], [acme, 'cid']] as const) {
          queued(await app.ingest(account, 'users', { userId, attributes: { round } }));
        }
        if (round === 6) poisons.push(await storePoisonProfile(app, acme, 'ann'));
      }
      const log = createLogger('silent');
      const [rebuilt] = await rebuildProjections(app.pool, app.services.store, [leadsProjection], { log, batchSize: 5_000 });
      expect(rebuilt?.events).to.equal(30);
      const versions = async (): Promise<Record<string, number>> =>
        Object.fromEntries(
          (await app.pool.query<{ user_id: string; version: number }>('SELECT user_id, version FROM leads ORDER BY user_id')).rows.map((r) => [r.user_id, r.version]),
        );
      expect(await versions()).to.deep.equal({ ann: 10, bob: 10, cid: 10 });
      expect(await parkedIds(app, 'leads')).to.deep.equal(poisons);

      // A replay in smaller batches parks the same event and gives the same rows.
      await rebuildProjections(app.pool, app.services.store, [leadsProjection], { log, batchSize: 4 });
      expect(await parkedIds(app, 'leads')).to.deep.equal(poisons);
      expect(await versions()).to.deep.equal({ ann: 10, bob: 10, cid: 10 });
    });
  });
});
