import { expect } from 'chai';
import { adminToken, servedApp, TestApp, type Credentials } from './support/app.js';
import { int4Max, int4Min, intAttributes, lengthLimits, notInt4 } from './support/documented-limits.js';
import { itemError, queued, requestError, storesNothing } from './support/replies.js';

/** The documented limits of item fields (docs/decisions.md) as a client meets them over HTTP. */
describe('item limits: what a client sees (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { projections: true });

  it('INT attributes of spec 2.2: 1.5, "3", 2147483648 and -2147483649 get 400 naming the field, and nothing is stored', async () => {
    await storesNothing(app, async () => {
      for (const name of intAttributes) {
        for (const value of notInt4) {
          const message = itemError(await app.ingest(account, 'users', { userId: 'u-1', attributes: {}, [name]: value }));
          expect(message, `${name}: ${JSON.stringify(value)}`).to.contain(name);
        }
      }
    });
  });

  it('INT attributes of spec 2.2 at both ends of the 32-bit range are accepted and kept by the leads read model', async () => {
    const atEnd = (value: number) => Object.fromEntries(intAttributes.map((name) => [name, value]));
    queued(await app.ingest(account, 'users', { userId: 'u-max', attributes: {}, ...atEnd(int4Max) }));
    queued(await app.ingest(account, 'users', { userId: 'u-min', attributes: {}, ...atEnd(int4Min) }));
    await app.projected();
    for (const [userId, value] of [['u-max', int4Max], ['u-min', int4Min]] as const) {
      const lead = await app.get<Record<string, unknown>>(`/admin/v1/accounts/${account.licenseCode}/leads/${userId}`, `Bearer ${adminToken}`);
      expect(lead.status, JSON.stringify(lead.body)).to.equal(200);
      for (const name of intAttributes) expect(lead.body[name], `${userId} ${name}`).to.equal(value);
    }
    expect(await app.pool.query('SELECT 1 FROM projection_parked_events')).to.have.property('rowCount', 0);
  });

  it('each documented maximum length: at the limit accepted, one past it 400 naming the field', async () => {
    for (const limit of lengthLimits) {
      const what = `${limit.endpoint} ${limit.field}`;
      const atLimit = await app.ingest(account, limit.endpoint, limit.item('a'.repeat(limit.max)));
      expect(atLimit.status, `${what} at ${limit.max}: ${JSON.stringify(atLimit.body)}`).to.equal(200);
      queued(atLimit);
      expect(itemError(await app.ingest(account, limit.endpoint, limit.item('a'.repeat(limit.max + 1)))), what).to.contain(limit.field);
    }
  });

  it('Idempotency-Key: 255 characters accepted, 256 refused with 400 naming the header', async () => {
    const event = { userId: 'u-1', eventName: 'Viewed' };
    queued(await app.ingest(account, 'events', event, { headers: { 'idempotency-key': 'k'.repeat(255) } }));
    const refused = await app.ingest(account, 'events', event, { headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(requestError(refused, 400)).to.contain('Idempotency-Key');
  });
});
