import { expect } from 'chai';
import { servedApp, TestApp, type Credentials, type SingleReply } from '../support/app.js';
import { accountRefs } from '../support/id-refs.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('users endpoints (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  it('queues a known user and stores a UserUpserted on the user stream with its metadata', async () => {
    const reply = await app.ingest<SingleReply>(account, 'users', {
      userId: 'u-1',
      firstName: 'Ann',
      email: 'ann@example.com',
      birth_date: '1990-05-01T00:00:00+0200',
      attributes: { membership_level: 'gold', age: 34, vip: true, last_login: '2024-01-01T10:00:00Z' },
    });
    expect(reply.status).to.equal(200);
    expect(reply.body.response.status).to.equal('queued');
    expect(reply.body.response.trackID).to.match(uuid);

    const [event] = await app.events();
    expect(event?.event_id).to.equal(reply.body.response.trackID);
    expect(event?.event_type).to.equal('UserUpserted');
    // Named by the account's internal id and the pseudonym of the userId: neither the license code nor the id.
    const refs = await accountRefs(app, account);
    expect(event?.stream_name).to.equal(`user-${refs.accountId}-${refs.user('u-1')}`);
    expect(event?.stream_name).not.to.contain('u-1');
    expect(event?.stream_name).not.to.contain(account.licenseCode);
    expect(event?.data).to.deep.include({
      userId: 'u-1',
      profile: { firstName: 'Ann', email: 'ann@example.com', birth_date: '1990-05-01T00:00:00+0200' },
      attributes: { membership_level: 'gold', age: 34, vip: true, last_login: '2024-01-01T10:00:00Z' },
      attributeTypes: { membership_level: 'string', age: 'number', vip: 'boolean', last_login: 'datetime' },
      instants: { birth_date: '1990-04-30T22:00:00.000Z', 'attributes.last_login': '2024-01-01T10:00:00.000Z' },
    });
    expect(event?.metadata).to.include({ trackId: reply.body.response.trackID, schemaVersion: 1 });
    expect(event?.metadata.accountId).to.match(uuid);
    expect(Date.parse(String(event?.metadata.receivedAt))).to.be.closeTo(Date.now(), 60_000);
  });

  it('stores an anonymous user on the anonymous stream', async () => {
    const reply = await app.ingest<SingleReply>(account, 'users', { anonymousId: 'anon-7', attributes: {} });
    expect(reply.status).to.equal(200);
    const [event] = await app.events();
    const refs = await accountRefs(app, account);
    expect(event?.stream_name).to.equal(`anonymous-${refs.accountId}-${refs.anonymous('anon-7')}`);
    expect(event?.stream_name).not.to.contain('anon-7');
    expect(event?.data).to.deep.include({ anonymousId: 'anon-7' });
  });

  it('rejects a user without identifiers or without attributes, naming the field (form B)', async () => {
    const noId = await app.ingest(account, 'users', { firstName: 'A', attributes: {} });
    expect(noId.status).to.equal(400);
    expect(noId.body).to.deep.equal({ response: { status: 'error', message: 'userId or anonymousId is required' } });
    const noAttributes = await app.ingest(account, 'users', { userId: 'u' });
    expect(noAttributes.body).to.deep.equal({ response: { status: 'error', message: 'attributes is required' } });
    expect(await app.events()).to.have.length(0);
  });

  it('answers bulk elements that are not objects with an element error, the others being stored', async () => {
    const reply = await app.ingest<{ response: { status: string; message?: string }[] }>(account, 'users/bulk', [
      5,
      null,
      'u-1',
      [],
      { userId: 'u-1', attributes: {} },
    ]);
    expect(reply.status).to.equal(200);
    expect(reply.body.response.slice(0, 4)).to.deep.equal(Array(4).fill({ status: 'error', message: 'the item must be an object' }));
    expect(reply.body.response[4]?.status).to.equal('queued');
    expect(await app.events()).to.have.length(1);
  });
});
