import { expect } from 'chai';
import type { RetryResult } from '../../projections/runner/retry.js';
import type { ProjectionStatus, ProjectionsStatus, RebuildStatus } from '../../projections/runner/status.js';
import type { LeadPage } from '../../projections/leads/queries.js';
import { adminToken, servedApp, type Credentials, type Reply, type TestApp } from '../support/app.js';
import { tracking } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { queued, requestError } from '../support/replies.js';

/** The operator API of the projections: status, rebuild (done by the active worker) and retry. */

const admin = `Bearer ${adminToken}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** A key of a session-level advisory lock the test holds to stop the leads replay at one row. */
const replayHoldKey = 731_001;

describe('operator API: projections (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  // One event per batch: a rebuild's progress moves event by event.
  servedApp((started) => ({ app, account } = started), { projections: true, config: { projectionBatchSize: 1 } });

  const overview = async (): Promise<ProjectionsStatus> => {
    const reply = await app.get<ProjectionsStatus>('/admin/v1/projections', admin);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body).to.have.all.keys('projections', 'parts', 'workers', 'accountsBehind');
    return reply.body;
  };
  const statuses = async (): Promise<ProjectionStatus[]> => (await overview()).projections;
  const statusOf = async (name: string): Promise<ProjectionStatus> => {
    const found = (await statuses()).find((s) => s.projection === name);
    if (!found) throw new Error(`no status for ${name}`);
    return found;
  };
  const post = <T>(path: string, token = admin): Promise<Reply<T>> => app.request<T>('POST', path, undefined, { authorization: token });

  it('lists every projection as `tracking projections status --json` does', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    await app.projected();
    const whole = await overview();
    const listed = whole.projections;
    const cli = await tracking(app, 'projections', 'status', '--json');
    expect(cli.code, cli.stderr).to.equal(0);
    // Lag in seconds is measured at each call, and a cursor's updatedAt moves when the worker
    // passes events of types its projection does not read (the products cursor past the profile,
    // after app.projected() has seen no lag of its own types); all else is the same.
    const comparable = (list: ProjectionStatus[]): Omit<ProjectionStatus, 'lagSeconds' | 'updatedAt'>[] =>
      list.map(({ lagSeconds: _lag, updatedAt: _updated, ...rest }) => rest);
    const fromCli = JSON.parse(cli.stdout) as ProjectionsStatus;
    expect(comparable(listed)).to.deep.equal(comparable(fromCli.projections));
    expect(listed.map((s) => s.projection)).to.deep.equal(['leads', 'user-events', 'products', 'track-index']);
    const leads = listed[0] as ProjectionStatus;
    expect(leads).to.include({ eventsApplied: 1, lagEvents: 0, accountsBehind: 0, rebuild: null });
    expect(leads.parked).to.deep.equal({ events: 0, latest: [] });
    // One worker (the app's): it holds every part.
    expect(whole.workers).to.have.length(1);
    expect(whole.workers[0]?.parts).to.have.length(whole.parts.length);
    expect(whole.parts.every((p) => p.owner?.workerId === whole.workers[0]?.workerId)).to.equal(true);
    expect(whole.accountsBehind).to.deep.equal([]);
  });

  it('rebuilds through the active worker: 202 at once, progress in the status, then finished with the leads there again', async () => {
    for (const userId of ['u-1', 'u-2', 'u-3', 'u-4', 'u-last']) queued(await app.ingest(account, 'users', { userId, attributes: {} }));
    await app.projected();

    // The replay waits at the row of u-last while this test holds the lock: the worker is then
    // mid-rebuild for as long as the test looks.
    await app.pool.query(`CREATE FUNCTION hold_replay() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${replayHoldKey}); RETURN NEW; END $$`);
    await app.pool.query(`CREATE TRIGGER hold_replay BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.profile_id = 'u-last') EXECUTE FUNCTION hold_replay()`);
    /** The status of the leads projection last read while waiting. */
    let last: ProjectionStatus | undefined;
    const holder = await app.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [replayHoldKey]);
      const requested = await post<{ projection: string; rebuild: RebuildStatus }>('/admin/v1/projections/leads/rebuild');
      expect(requested.status, show(requested)).to.equal(202);
      expect(requested.body.projection).to.equal('leads');
      expect(requested.body.rebuild).to.include({ state: 'requested', startedAt: null, target: null });
      expect(Date.parse(requested.body.rebuild.requestedAt as string)).to.be.closeTo(Date.now(), 60_000);

      const running = await eventually(
        async () => {
          const leads = (last = await statusOf('leads'));
          return leads.rebuild?.state === 'running' && leads.eventsApplied === 4 ? leads : undefined;
        },
        20_000,
        () => `the rebuild never reached u-last: ${JSON.stringify(last)}`,
      );
      expect(running.rebuild).to.include({ target: 5 });
      const midway = await app.get<LeadPage>(`/admin/v1/accounts/${account.licenseCode}/leads`, admin);
      expect(midway.body.leads.map((l) => l.userId)).to.deep.equal(['u-4', 'u-3', 'u-2', 'u-1']);

      const again = await post('/admin/v1/projections/leads/rebuild');
      expect(requestError(again, 409)).to.contain('already running');
      expect(requestError(await post('/admin/v1/projections/leads/retry'), 409)).to.contain('rebuild of leads is under way');
      // Asking again did not restart it.
      expect((await statusOf('leads')).rebuild?.startedAt).to.equal(running.rebuild?.startedAt);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [replayHoldKey]);
      holder.release();
    }

    const finished = await eventually(
      async () => {
        const leads = (last = await statusOf('leads'));
        return leads.rebuild?.state === 'finished' ? leads : undefined;
      },
      20_000,
      () => `the rebuild never finished: ${JSON.stringify(last)}`,
    );
    expect(finished).to.include({ eventsApplied: 5, lagEvents: 0 });
    expect(finished.rebuild).to.include({ target: 5 });
    await app.pool.query('DROP TRIGGER hold_replay ON leads');
    const leads = await app.get<LeadPage>(`/admin/v1/accounts/${account.licenseCode}/leads`, admin);
    expect(leads.body.leads.map((l) => l.userId)).to.deep.equal(['u-last', 'u-4', 'u-3', 'u-2', 'u-1']);

    // A finished rebuild may be followed by another.
    const next = await post<{ rebuild: RebuildStatus }>('/admin/v1/projections/leads/rebuild');
    expect(next.status, show(next)).to.equal(202);
    expect(next.body.rebuild.state).to.equal('requested');
  });

  it('retries parked events: 200 with the counts, and the event applied once its cause is fixed', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    await app.pool.query("ALTER TABLE user_events ADD CONSTRAINT no_blocked_events CHECK (event_name <> 'blocked')");
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'blocked' }));
    await app.projected();
    expect((await statusOf('user-events')).parked.events).to.equal(1);

    const failed = await post<RetryResult>('/admin/v1/projections/user-events/retry');
    expect(failed.status, show(failed)).to.equal(200);
    expect(failed.body).to.deep.equal({ projection: 'user-events', retried: 1, applied: 0, stillParked: 1 });
    expect((await statusOf('user-events')).parked.latest[0]?.attempts).to.equal(2);

    await app.pool.query('ALTER TABLE user_events DROP CONSTRAINT no_blocked_events');
    const applied = await post<RetryResult>('/admin/v1/projections/user-events/retry');
    expect(applied.body).to.deep.equal({ projection: 'user-events', retried: 1, applied: 1, stillParked: 0 });
    expect((await statusOf('user-events')).parked.events).to.equal(0);
    const events = await app.get<{ events: { eventName: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/leads/u-1/events`, admin);
    expect(events.body.events.map((e) => e.eventName)).to.deep.equal(['blocked']);
    // Nothing parked: nothing to retry.
    expect((await post<RetryResult>('/admin/v1/projections/leads/retry')).body).to.include({ retried: 0 });
  });

  it('answers 404 for an unknown projection (and for `all`, which only the CLI takes)', async () => {
    for (const name of ['nope', 'all', 'LEADS']) {
      requestError(await post(`/admin/v1/projections/${name}/rebuild`), 404);
      requestError(await post(`/admin/v1/projections/${name}/retry`), 404);
    }
    expect((await statusOf('leads')).rebuild).to.equal(null);
  });

  it('refuses account tokens and requests without the admin token, and requests nothing then', async () => {
    const calls: [string, string][] = [
      ['GET', '/admin/v1/projections'],
      ['POST', '/admin/v1/projections/leads/rebuild'],
      ['POST', '/admin/v1/projections/leads/retry'],
    ];
    for (const [method, path] of calls) {
      const byAccount = await app.request(method, path, undefined, { authorization: `Bearer ${account.accessToken}` });
      requestError(byAccount, 403);
      requestError(await app.request(method, path), 401);
      requestError(await app.request(method, path, undefined, { authorization: `Bearer ${adminToken}x` }), 401);
    }
    expect((await statusOf('leads')).rebuild).to.equal(null);
  });
});
