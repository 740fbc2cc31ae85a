import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import { TestApp, type Credentials, type Reply } from '../support/app.js';
import { databaseText } from '../support/database-text.js';
import { eventually } from '../support/eventually.js';
import { capturedLog } from '../support/log-lines.js';
import { erasureDone, everythingKept } from '../support/erasures.js';
import { rebuildAllProjections } from '../support/projections.js';
import { queued } from '../support/replies.js';

/** Ids as customers use them: an email address as the userId, and browser ids merged into it. */
const userId = 'ada.lovelace.ids@example.com';
const anonymousIds = ['b7f3c2d0-aaaa-4bbb-8ccc-000000000001', 'b7f3c2d0-aaaa-4bbb-8ccc-000000000002'];
const ids = [userId, ...anonymousIds];

/** How often `needle` occurs in `text`. */
const occurrences = (text: string, needle: string): number => text.split(needle).length - 1;

describe('erasure leaves no id in clear (e2e, on the store under test)', function () {
  this.timeout(180_000);
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
  const lead = (account: Credentials, id: string): Promise<Reply<Record<string, unknown>>> => app.get(`/admin/v1/accounts/${account.licenseCode}/leads/${encodeURIComponent(id)}`, bearer(account));
  /** Every place the service keeps or writes anything: its database (what pg_dump writes), the EventStoreDB it writes to, its log. */
  const everything = (): Promise<string> => everythingKept(app, log);
  const counts = async (): Promise<Record<string, number>> => {
    const text = await everything();
    return Object.fromEntries(ids.map((id) => [id, occurrences(text, id)]));
  };

  async function person(account: Credentials, note: string): Promise<void> {
    for (const anonymousId of anonymousIds) {
      queued(await app.ingest(account, 'events', { anonymousId, eventName: 'visit', eventData: { note } }));
      queued(await app.ingest(account, 'users', { userId, anonymousId, firstName: note, attributes: {} }));
    }
    queued(await app.ingest(account, 'events', { userId, eventName: 'bought', eventData: { note } }));
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', userId, eventName: 'viewed' }));
    // A refusal and a recorded reply that name the person.
    expect((await app.ingest(account, 'events', { userId, eventName: 'x', eventTime: 'not a time' })).status).to.equal(400);
    queued(await app.ingest(account, 'events', { userId, eventName: 'once' }, { headers: { 'idempotency-key': `key-${note}` } }));
  }

  const erased = (account: Credentials, body: unknown): Promise<Erasure> => erasureDone(app, account, body);

  it('keeps no userId or merged anonymousId in any table, stream or log line once erased, also after a rebuild; another account’s person of the same ids stays whole', async () => {
    // Another account's person of the very same ids: what it leaves is counted first.
    await person(globex, 'globex-note');
    await app.projected();
    await eventually(async () => ((await everything()).includes('not a time') ? true : undefined), 10_000, () => 'the refusal was never recorded');
    const globexOnly = await counts();

    await person(acme, 'acme-note');
    await app.projected();
    const both = await counts();
    for (const id of ids) expect(both[id], id).to.be.above(globexOnly[id] as number);

    const erasure = await erased(acme, { userId, suppress: true });
    expect(erasure.counts?.keys).to.equal(3);
    expect(await counts()).to.deep.equal(globexOnly);
    for (const id of ids) expect((await lead(acme, id)).status, id).to.equal(404);
    const kept = await lead(globex, userId);
    expect(kept.status).to.equal(200);
    expect(kept.body).to.include({ userId, firstName: 'globex-note' });

    // Suppressed: refused, and the refusal keeps no id either.
    expect((await app.ingest(acme, 'events', { userId, eventName: 'again' })).status).to.equal(400);
    await rebuildAllProjections(app);
    expect(await counts()).to.deep.equal(globexOnly);
    expect((await lead(globex, userId)).body).to.include({ firstName: 'globex-note' });
  });

  it('an anonymousId erased alone leaves the lead of the user it was merged into, where it is listed no more', async () => {
    const [first, second] = anonymousIds as [string, string];
    for (const anonymousId of anonymousIds) {
      queued(await app.ingest(acme, 'events', { anonymousId, eventName: 'visit', eventData: { note: `note-${anonymousId}` } }));
      queued(await app.ingest(acme, 'users', { userId, anonymousId, attributes: {} }));
    }
    await app.projected();
    expect((await lead(acme, userId)).body.anonymousIds).to.have.members(anonymousIds);
    await erased(acme, { anonymousId: first });
    const kept = await lead(acme, userId);
    expect(kept.status).to.equal(200);
    expect(kept.body.anonymousIds).to.deep.equal([second]);
    expect((await lead(acme, first)).status).to.equal(404);
    const text = await everything();
    expect(text).not.to.contain(`note-${first}`);
    expect(text).to.contain(`note-${second}`);
    // The identity map keeps the merge by pseudonym only; the profile that made the merge is the
    // user's and still names it (docs/decisions.md, Erasure: Limits).
    const merges = await app.pool.query<{ anonymous_id: string | null }>('SELECT anonymous_id FROM identity_merges ORDER BY anonymous_id NULLS FIRST');
    expect(merges.rows.map((r) => r.anonymous_id)).to.deep.equal([null, second]);
  });

  it('an auditor given the ids finds the erasure and its events by their pseudonyms, and no one reads an id from them', async () => {
    await person(acme, 'audited');
    await app.projected();
    const erasure = await erased(acme, { userId });
    expect(erasure.userId).to.equal(null);
    expect(erasure.userRef).to.be.a('string').and.not.to.contain(userId);
    const lookup = (body: unknown): Promise<Reply<{ userRef: string | null; erasures: Erasure[] }>> =>
      app.request('POST', `/v1/accounts/${acme.licenseCode}/erasures/lookup`, body, { authorization: bearer(acme) });
    const found = await lookup({ userId });
    expect(found.status).to.equal(200);
    expect(found.body.userRef).to.equal(erasure.userRef);
    expect(found.body.erasures.map((e) => e.id)).to.deep.equal([erasure.id]);
    expect((await lookup({ userId: 'someone-else' })).body.erasures).to.deep.equal([]);
    expect((await lookup({ nobody: 'x' })).status).to.equal(400);
    const text = await databaseText(app.pool);
    expect(text).to.contain(erasure.userRef as string).and.not.to.contain(userId);
    // The same ids are other pseudonyms in another account: nothing ties the two.
    await person(globex, 'globex');
    await app.projected();
    const globexErasure = await erased(globex, { userId });
    expect(globexErasure.userRef).not.to.equal(erasure.userRef);
  });
});
