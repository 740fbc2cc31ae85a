import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import { TestApp, adminToken, type Credentials, type Reply } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { capturedLog } from '../support/log-lines.js';
import { everythingKept } from '../support/erasures.js';
import { rebuildAllProjections } from '../support/projections.js';
import { queued } from '../support/replies.js';

const admin = `Bearer ${adminToken}`;

/** What acme's person u-1 sent, anywhere: none of it may be kept once they are erased. */
const secrets = {
  email: 'ada.secret@example.com',
  firstName: 'Adalinde',
  lastName: 'Quorvast',
  attribute: 'zinnober-favourite',
  anonymous: 'anon-secret-value-77',
  eventData: 'secret-note-4711',
  productEvent: 'product-secret-0815',
  refused: 'refused-secret-2323',
};

describe('erasure of a person (e2e, on the store under test)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let acme: Credentials;
  let globex: Credentials;
  let log: ReturnType<typeof capturedLog>;

  beforeEach(async () => {
    log = capturedLog('debug');
    app = await TestApp.start({}, { projections: true, log: log.log });
    acme = await app.account('Acme');
    globex = await app.account('Globex');
  });
  afterEach(() => app.stop());

  const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
  const erase = (account: Credentials, body: unknown, authorization = bearer(account)): Promise<Reply<Erasure>> =>
    app.request<Erasure>('POST', `/v1/accounts/${account.licenseCode}/erasures`, body, { authorization });
  const erasureOf = (account: Credentials, id: string, authorization = bearer(account)): Promise<Reply<Erasure>> =>
    app.get<Erasure>(`/v1/accounts/${account.licenseCode}/erasures/${id}`, authorization);
  const done = (account: Credentials, id: string): Promise<Erasure> =>
    eventually(
      async () => {
        const reply = await erasureOf(account, id);
        return reply.body.state === 'done' ? reply.body : undefined;
      },
      60_000,
      () => `erasure ${id} never finished`,
    );
  const lead = (account: Credentials, id: string): Promise<Reply<Record<string, unknown>>> =>
    app.get(`/admin/v1/accounts/${account.licenseCode}/leads/${id}`, bearer(account));

  /** Every place the service keeps or writes anything: its database, the EventStoreDB it writes to, its log. */
  const everything = (): Promise<string> => everythingKept(app, log);

  it('leaves none of the person’s values in the database, the event store or the log; keeps what an auditor needs; survives a rebuild', async () => {
    queued(await app.ingest(acme, 'users', { anonymousId: 'anon-1', attributes: { note: secrets.anonymous } }));
    queued(
      await app.ingest(
        acme,
        'users',
        { userId: 'u-1', email: secrets.email, firstName: secrets.firstName, lastName: secrets.lastName, attributes: { colour: secrets.attribute } },
        { headers: { 'idempotency-key': 'profile-u-1' } },
      ),
    );
    // The merge: anon-1's profile and events become u-1's.
    queued(await app.ingest(acme, 'users', { userId: 'u-1', anonymousId: 'anon-1', attributes: {} }));
    const eventTrackId = queued(await app.ingest(acme, 'events', { userId: 'u-1', eventName: 'note-taken', eventData: { note: secrets.eventData } }));
    queued(await app.ingest(acme, 'products', { productId: 'p-1', properties: { name: 'Lamp' } }));
    queued(await app.ingest(acme, 'productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'viewed', eventData: { note: secrets.productEvent } }));
    const refused = await app.ingest(acme, 'events', { userId: 'u-1', eventName: 'x', eventTime: 'not a time', eventData: { note: secrets.refused } });
    expect(refused.status).to.equal(400);
    // Another account's person of the same userId.
    queued(await app.ingest(globex, 'users', { userId: 'u-1', email: 'globex.keeps@example.com', attributes: { colour: 'globex-blue' } }));
    await app.projected();
    await eventually(async () => ((await everything()).includes(secrets.refused) ? true : undefined), 10_000, () => 'the refused item was never recorded');
    const before = await everything();
    for (const value of Object.values(secrets)) expect(before, value).to.contain(value);

    const requested = await erase(acme, { userId: 'u-1' });
    expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
    expect(requested.body).to.include({ userId: 'u-1', anonymousId: null, suppress: false, state: 'pending', doneAt: null });
    expect(requested.body.requestedBy).to.match(/^access token /);
    const erasure = await done(acme, requested.body.id);
    expect(erasure.counts).to.deep.equal({ keys: 2, events: 6, leads: 2, rejectedItems: 1, idempotencyReplies: 0 });
    expect(Date.parse(erasure.doneAt as string)).to.be.at.least(Date.parse(erasure.requestedAt));

    expect((await lead(acme, 'u-1')).status).to.equal(404);
    expect((await lead(acme, 'anon-1')).status).to.equal(404);
    expect((await lead(globex, 'u-1')).body).to.include({ userId: 'u-1', email: 'globex.keeps@example.com' });

    // The auditor's view: the trackID, its type and time, and the erasure; not the data.
    const lookup = await app.get<{ events: { type: string; recordedAt: string; data: Record<string, unknown>; erasedBy?: { erasureId: string; erasedAt: string } }[] }>(
      `/admin/v1/accounts/${acme.licenseCode}/track/${eventTrackId}`,
      bearer(acme),
    );
    expect(lookup.status).to.equal(200);
    const [audited] = lookup.body.events;
    expect(audited?.type).to.equal('EventTracked');
    expect(audited?.erasedBy?.erasureId).to.equal(erasure.id);
    // The person is named by the pseudonym of their id only (docs/decisions.md, Erasure).
    expect(audited?.data).to.include({ eventName: '' }).and.not.to.have.property('userId');
    expect(audited?.data.userRef).to.equal(erasure.userRef).and.to.be.a('string');
    expect(audited?.data.eventData).to.deep.equal({});

    const after = await everything();
    for (const value of Object.values(secrets)) expect(after, value).not.to.contain(value);
    expect(after).to.contain('globex.keeps@example.com').and.contain('globex-blue');

    await rebuildAllProjections(app);
    expect((await lead(acme, 'u-1')).status).to.equal(404);
    expect((await lead(globex, 'u-1')).body).to.include({ email: 'globex.keeps@example.com' });
    const rebuilt = await everything();
    for (const value of Object.values(secrets)) expect(rebuilt, value).not.to.contain(value);

    // Not suppressed: the person may come back, as a new person with new data.
    queued(await app.ingest(acme, 'users', { userId: 'u-1', email: 'back@example.com', attributes: {} }));
    await app.projected();
    expect((await lead(acme, 'u-1')).body).to.include({ email: 'back@example.com' });
  });

  it('suppresses: new items naming a suppressed id are refused 400 with reason suppressed in the warnings', async () => {
    queued(await app.ingest(acme, 'events', { anonymousId: 'anon-s', eventName: 'visit', eventData: { page: '/' } }));
    const requested = await erase(acme, { anonymousId: 'anon-s', suppress: true });
    expect(requested.status).to.equal(202);
    await done(acme, requested.body.id);

    const refusedEvent = await app.ingest<{ response: { status: string; message: string } }>(acme, 'events', { anonymousId: 'anon-s', eventName: 'visit' });
    expect(refusedEvent.status).to.equal(400);
    expect(refusedEvent.body.response.message).to.match(/^anonymousId is suppressed/);
    const refusedProfile = await app.ingest<{ response: { status: string; message: string } }>(acme, 'users', { userId: 'u-9', anonymousId: 'anon-s', attributes: {} });
    expect(refusedProfile.status).to.equal(400);
    expect(refusedProfile.body.response.message).to.match(/^anonymousId is suppressed/);
    // Another account's anon-s is not suppressed.
    queued(await app.ingest(globex, 'events', { anonymousId: 'anon-s', eventName: 'visit' }));
    const warnings = await eventually(
      async () => {
        const reply = await app.get<{ warnings: { reason: string; field: string }[] }>(`/admin/v1/accounts/${acme.licenseCode}/warnings/recent`, bearer(acme));
        return reply.body.warnings.filter((w) => w.reason === 'suppressed').length === 2 ? reply.body.warnings : undefined;
      },
      10_000,
      () => 'the refusals never showed in the warnings',
    );
    expect(warnings.filter((w) => w.reason === 'suppressed').map((w) => w.field)).to.deep.equal(['anonymousId', 'anonymousId']);
  });

  it('keeps accounts apart: another account can neither see nor list nor make an account’s erasures', async () => {
    const requested = await erase(acme, { userId: 'u-2' });
    expect(requested.status).to.equal(202);
    expect((await erasureOf(acme, requested.body.id, bearer(globex))).status).to.equal(401);
    expect((await erasureOf(globex, requested.body.id)).status).to.equal(404);
    expect((await erase(acme, { userId: 'u-2' }, bearer(globex))).status).to.equal(401);
    const globexList = await app.get<{ erasures: Erasure[] }>(`/v1/accounts/${globex.licenseCode}/erasures`, bearer(globex));
    expect(globexList.body.erasures).to.deep.equal([]);
    const acmeList = await app.get<{ erasures: Erasure[]; nextCursor: string | null }>(`/v1/accounts/${acme.licenseCode}/erasures`, bearer(acme));
    expect(acmeList.body.erasures.map((e) => e.id)).to.deep.equal([requested.body.id]);
    // The operator may, for any account.
    expect((await erasureOf(acme, requested.body.id, admin)).body.id).to.equal(requested.body.id);
    await done(acme, requested.body.id);
  });

  it('refuses a request naming no one, or a field it does not know, with 400 naming the field', async () => {
    const none = await erase(acme, {});
    expect(none.status).to.equal(400);
    expect(JSON.stringify(none.body)).to.contain('userId').and.contain('anonymousId');
    const unknown = await erase(acme, { userId: 'u-1', email: 'x@example.com' });
    expect(unknown.status).to.equal(400);
    expect(JSON.stringify(unknown.body)).to.contain('email');
    const placeholder = await erase(acme, { userId: 'undefined' });
    expect(placeholder.status).to.equal(400);
    expect(JSON.stringify(placeholder.body)).to.contain('placeholder');
    expect((await app.get(`/v1/accounts/${acme.licenseCode}/erasures/not-an-id`, bearer(acme))).status).to.equal(404);
  });
});
