import { expect } from 'chai';
import { projections } from '../projections/index.js';
import { accountCaughtUp } from '../projections/runner/rebuild.js';
import { createPool, type Pool } from '../src/db/pool.js';
import type { Erasure } from '../src/erasure/requests.js';
import { databaseText } from './support/database-text.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { storedRefs } from './support/id-refs.js';
import { eventually, until, within } from './support/eventually.js';
import { post, ServiceProcess } from './support/service-process.js';
import { kill, startWorker, stopStartedWorkers, waitMidBatch } from './support/worker-processes.js';

/**
 * An erasure is a durable job (src/erasure/runner.ts): a process killed in the middle of one leaves
 * it pending under a lease that runs out, and the next process takes it over and finishes it. Run
 * on `npm start` (dist/src/main.js) as a child process, killed with SIGKILL: nothing of the
 * process gets to run on its way out.
 */

const adminToken = 'erasure-crash-admin';

/** What the person erased sent: none of it may be left anywhere once the erasure is done. */
const secrets = {
  email: 'crash.erased.person@example.com',
  firstName: 'Ottoline',
  lastName: 'Brakewater',
  attribute: 'cerulean-crash-42',
  anonymous: 'anon-crash-secret-90',
  eventData: 'crash-note-8086',
  productEvent: 'crash-product-note-6502',
};

/** Another person of the same account: what the rebuild must give back. */
const keeper = { userId: 'u-keep', email: 'kept.person@example.com' };

interface Account {
  licenseCode: string;
  accessToken: string;
  id: string;
}

async function get<T>(base: string, path: string, token: string): Promise<{ status: number; body: T }> {
  const response = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

describe('erasure across a crash (e2e, service processes killed with SIGKILL)', function () {
  this.timeout(240_000);
  let database: TestDatabase;
  let pool: Pool;
  const services: ServiceProcess[] = [];

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 2);
  });
  afterEach(async () => {
    await stopStartedWorkers();
    for (const service of services.splice(0)) await service.kill();
    await pool.end();
    await database.drop();
  });

  function startService(env: Record<string, string> = {}): ServiceProcess {
    const service = ServiceProcess.start('main', { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken, ...env });
    services.push(service);
    return service;
  }

  async function newAccount(base: string): Promise<Account> {
    const created = await post(base, '/admin/v1/accounts', { name: 'crash' }, adminToken);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { licenseCode, accessToken } = created.body as { licenseCode: string; accessToken: string };
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [licenseCode]);
    return { licenseCode, accessToken, id: (rows[0] as { id: string }).id };
  }

  async function ingest(base: string, account: Account, endpoint: string, item: unknown): Promise<void> {
    const reply = await post(base, `/v1/accounts/${account.licenseCode}/${endpoint}`, item, account.accessToken);
    expect(reply.status, `${endpoint}: ${JSON.stringify(reply.body)}`).to.equal(200);
    const results = Array.isArray(reply.body.response) ? (reply.body.response as { status: string }[]) : [reply.body.response as { status: string }];
    for (const result of results) expect(result.status, `${endpoint}: ${JSON.stringify(result)}`).to.equal('queued');
  }

  /** The person to erase (a known user with an anonymous profile merged into them, events and a product event), and the keeper. */
  async function sendPeople(base: string, account: Account): Promise<void> {
    await ingest(base, account, 'users', { anonymousId: 'anon-crash', attributes: { note: secrets.anonymous } });
    await ingest(base, account, 'users', {
      userId: 'u-crash',
      email: secrets.email,
      firstName: secrets.firstName,
      lastName: secrets.lastName,
      attributes: { colour: secrets.attribute },
    });
    await ingest(base, account, 'users', { userId: 'u-crash', anonymousId: 'anon-crash', attributes: {} });
    for (let i = 0; i < 3; i += 1) await ingest(base, account, 'events', { userId: 'u-crash', eventName: 'noted', eventData: { note: secrets.eventData, i } });
    await ingest(base, account, 'productsevents', { productId: 'p-1', userId: 'u-crash', eventName: 'viewed', eventData: { note: secrets.productEvent } });
    await ingest(base, account, 'users', { userId: keeper.userId, email: keeper.email, attributes: { colour: 'kept-green' } });
  }

  const lead = (base: string, account: Account, id: string) => get<Record<string, unknown>>(base, `/admin/v1/accounts/${account.licenseCode}/leads/${id}`, account.accessToken);

  async function projected(base: string, account: Account): Promise<void> {
    await until(
      async () => (await lead(base, account, 'u-crash')).body.email === secrets.email && (await lead(base, account, keeper.userId)).status === 200,
      30_000,
      () => 'the leads never showed',
    );
  }

  async function requestErasure(base: string, account: Account): Promise<string> {
    const requested = await post(base, `/v1/accounts/${account.licenseCode}/erasures`, { userId: 'u-crash' }, account.accessToken);
    expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
    return requested.body.id as string;
  }

  async function done(base: string, account: Account, id: string): Promise<Erasure> {
    let last: Erasure | null = null;
    return eventually(
      async () => {
        last = (await get<Erasure>(base, `/v1/accounts/${account.licenseCode}/erasures/${id}`, account.accessToken)).body;
        return last.state === 'done' ? last : undefined;
      },
      120_000,
      () => `the erasure never finished: ${JSON.stringify(last)}`,
      250,
    );
  }

  const erasureRow = async (id: string) =>
    (
      await pool.query<{ state: string; attempts: number; keys_erased_at: Date | null; leased: boolean }>(
        'SELECT state, attempts, keys_erased_at, lease_until > clock_timestamp() AS leased FROM erasures WHERE id = $1',
        [id],
      )
    ).rows[0];

  /** Everything kept: the database's rows, and what the processes logged. */
  const everything = async (processes: ServiceProcess[]): Promise<string> =>
    [await databaseText(pool), ...processes.map((p) => `${JSON.stringify(p.lines)}\n${p.stderr}`)].join('\n');

  it('the service killed while an erasure waits after erasing the keys: a service started again on the database takes it over once the lease ran out, and finishes it', async () => {
    const first = startService();
    await first.waitForHealth();
    const account = await newAccount(first.base);
    await sendPeople(first.base, account);
    await projected(first.base, account);
    const before = await everything([first]);
    for (const [name, value] of Object.entries(secrets)) expect(before, name).to.contain(value);

    const id = await requestErasure(first.base, account);
    // Killed as soon as the keys are erased: the job then waits 6 s before it rebuilds.
    await until(async () => (await erasureRow(id))?.keys_erased_at != null, 30_000, () => 'the keys were never erased', 10);
    first.child.kill('SIGKILL');
    await within(first.exited, 15_000, 'the killed service to exit');

    // Cut off in the middle: pending, leased to the dead process, the keys gone, the read models not yet rebuilt.
    expect(await erasureRow(id)).to.deep.include({ state: 'pending', attempts: 1, leased: true });
    const { rows: keys } = await pool.query<{ person_id: string; erased: boolean }>(
      'SELECT person_id, key IS NULL AS erased FROM person_keys WHERE account_id = $1 ORDER BY person_id',
      [account.id],
    );
    // Persons are kept by the pseudonyms of their ids.
    const refs = await storedRefs(pool, account.id);
    expect(keys).to.have.deep.members([
      { person_id: `a:${refs.anonymous('anon-crash')}`, erased: true },
      { person_id: `u:${refs.user('u-crash')}`, erased: true },
      { person_id: `u:${refs.user(keeper.userId)}`, erased: false },
    ]);
    expect(keys).to.have.length(3);
    const { rows: leads } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM leads WHERE account_id = $1 AND profile_id IN ('u-crash', 'anon-crash')", [account.id]);
    expect(leads[0]?.n, 'leads of the person left for the rebuild').to.equal(2);
    expect(await databaseText(pool), 'the read models still hold the email').to.contain(secrets.email);

    const second = startService();
    await second.waitForHealth();
    const erasure = await done(second.base, account, id);
    expect(await erasureRow(id)).to.deep.include({ state: 'done', attempts: 2, leased: null });
    // What it erased, though the keys went in the attempt that was cut off.
    expect(erasure.counts).to.deep.equal({ keys: 2, events: 8, leads: 2, rejectedItems: 0, idempotencyReplies: 0 });
    expect(erasure.error).to.equal(null);

    expect((await lead(second.base, account, 'u-crash')).status).to.equal(404);
    expect((await lead(second.base, account, 'anon-crash')).status).to.equal(404);
    expect((await lead(second.base, account, keeper.userId)).body).to.include({ userId: keeper.userId, email: keeper.email });
    const after = await everything([first, second]);
    for (const [name, value] of Object.entries(secrets)) expect(after, name).not.to.contain(value);
    expect(after).to.contain(keeper.email).and.to.contain('kept-green');
  });

  it('a projection worker process killed while it replays the account for an erasure: the erasure waits, and finishes once a worker runs again', async () => {
    // The projections in a worker process of their own, which replays in batches of 10.
    const service = startService({ PROJECTIONS: 'off' });
    await service.waitForHealth();
    const worker = startWorker(database.url, { PROJECTION_BATCH_SIZE: '10' });
    const account = await newAccount(service.base);
    await sendPeople(service.base, account);
    // Enough of the keeper's events that the replay takes many batches.
    const keeperEvents = 1_500;
    for (let sent = 0; sent < keeperEvents; sent += 100) {
      await ingest(
        service.base,
        account,
        'events/bulk',
        Array.from({ length: 100 }, (_, i) => ({ userId: keeper.userId, eventName: 'browsed', eventData: { i: sent + i } })),
      );
    }
    const keeperEventRows = async (): Promise<number> =>
      (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM user_events WHERE account_id = $1 AND user_id = 'u-keep'", [account.id])).rows[0]?.n ?? -1;
    await projected(service.base, account);
    await until(async () => (await keeperEventRows()) === keeperEvents, 60_000, () => 'the keeper’s events were never all projected');

    const id = await requestErasure(service.base, account);
    // The runner resets the account's read models (once the keys are erased and the settle wait is over) and waits for the worker to replay them.
    await until(
      async () =>
        (
          await pool.query<{ reset: boolean }>(
            'SELECT coalesce(pa.reset_at > e.keys_erased_at, false) AS reset FROM projection_accounts pa, erasures e WHERE pa.account_id = $1 AND e.id = $2',
            [account.id, id],
          )
        ).rows[0]?.reset === true,
      60_000,
      () => 'the account’s read models were never reset',
    );
    expect(await waitMidBatch(pool, worker, 20_000), `the worker replaying the account: ${worker.output()}`).not.to.equal(false);
    await kill(worker, 'SIGKILL');
    expect(await accountCaughtUp(pool, projections, account.id), 'the replay was cut off').to.equal(false);
    expect(await erasureRow(id)).to.deep.include({ state: 'pending', attempts: 1 });

    startWorker(database.url);
    const erasure = await done(service.base, account, id);
    expect(erasure.counts).to.deep.include({ keys: 2, leads: 2 });
    expect(await erasureRow(id)).to.deep.include({ state: 'done', attempts: 1 });
    expect((await lead(service.base, account, 'u-crash')).status).to.equal(404);
    expect((await lead(service.base, account, 'anon-crash')).status).to.equal(404);
    expect((await lead(service.base, account, keeper.userId)).body).to.include({ userId: keeper.userId, email: keeper.email });
    expect(await keeperEventRows(), 'the keeper’s events, replayed whole').to.equal(keeperEvents);
    const after = await everything([service]);
    for (const [name, value] of Object.entries(secrets)) expect(after, name).not.to.contain(value);
  });
});
