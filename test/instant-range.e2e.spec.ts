import { expect } from 'chai';
import { servedApp, TestApp, type Credentials } from './support/app.js';
import { bulkResults, itemError, queued, storesNothing } from './support/replies.js';

/**
 * Date-times are accepted only when their UTC instant lies in 0001-01-01T00:00:00Z ..
 * 9999-12-31T23:59:59.999999Z, the instants the read models' timestamptz columns hold and show.
 * Offsets move a time across either end, so the edges are sent with and without them.
 */

/** The first and last accepted instants, written in UTC and with offsets that land on them exactly. */
const firstInstant = '0001-01-01T00:00:00.000000Z';
const lastInstant = '9999-12-31T23:59:59.999999Z';
const accepted: [string, string][] = [
  ['0001-01-01T00:00:00Z', firstInstant],
  ['0001-01-01T01:00:00+0100', firstInstant],
  ['9999-12-31T23:59:59.999999Z', lastInstant],
  ['9999-12-31T22:59:59.999999-01:00', lastInstant],
];

/** One microsecond (or one offset) beyond either end. */
const refused = [
  '0001-01-01T00:59:59.999999+0100',
  '0001-01-01T00:30:00+0100',
  '0000-12-31T23:59:59.999999Z',
  '9999-12-31T23:00:00-0100',
  '9999-12-31T23:59:59-2359',
];

const rangeMessage = `must be an ISO 8601 date-time from ${firstInstant} to ${lastInstant} once read as UTC`;

describe('date-times the read models can hold (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { projections: true });

  const rowsOf = async <T>(sql: string, params: unknown[]): Promise<T[]> => (await app.pool.query(sql, params)).rows as T[];

  it('accepts birth_date and datetime attributes at both ends of the range, and the leads read model holds them', async () => {
    for (const [index, [sent]] of accepted.entries()) {
      queued(await app.ingest(account, 'users', { userId: `u${index}`, birth_date: sent, attributes: { seen_at: sent } }));
    }
    await app.projected();
    const rows = await rowsOf<{ profile_id: string; birth_date: string; seen_at: string }>(
      `SELECT profile_id, iso_utc(birth_date) AS birth_date, attributes->>'seen_at' AS seen_at FROM leads ORDER BY profile_id`,
      [],
    );
    expect(rows).to.deep.equal(accepted.map(([, instant], index) => ({ profile_id: `u${index}`, birth_date: instant, seen_at: instant })));
  });

  it('refuses birth_date, last_active and datetime attributes beyond either end, naming the field, storing nothing', async () => {
    for (const time of refused) {
      const birth = await storesNothing(app, () => app.ingest(account, 'users', { userId: 'u1', birth_date: time, attributes: {} }));
      expect(itemError(birth)).to.equal(`birth_date ${rangeMessage}`);
      const active = await storesNothing(app, () => app.ingest(account, 'users', { userId: 'u1', last_active: time, attributes: {} }));
      expect(itemError(active)).to.equal(`last_active ${rangeMessage}`);
      const attribute = await storesNothing(app, () => app.ingest(account, 'users', { userId: 'u1', attributes: { seen_at: time } }));
      expect(itemError(attribute)).to.equal(`attributes.seen_at ${rangeMessage}, not '${time}'`);
    }
  });

  it('refuses such a user inside a bulk request as that element only', async () => {
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u1', birth_date: '9999-12-31T23:59:59-2359', attributes: {} },
        { userId: 'u2', birth_date: '9999-12-31T23:59:59Z', attributes: {} },
      ]),
    );
    expect(results[0]).to.deep.equal({ status: 'error', message: `birth_date ${rangeMessage}` });
    expect(results[1]?.status).to.equal('queued');
  });

  it('accepts eventTime at both ends on /events and /productsevents, and their read models hold the instants', async () => {
    for (const [sent] of accepted) {
      queued(await app.ingest(account, 'events', { userId: 'u1', eventName: 'edge', eventTime: sent }));
      queued(await app.ingest(account, 'productsevents', { productId: 'p1', userId: 'u1', eventName: 'edge', eventTime: sent }));
    }
    await app.projected();
    const expected = accepted.map(([sent, instant]) => ({ event_time: sent, event_time_utc: instant }));
    for (const table of ['user_events', 'product_events']) {
      const rows = await rowsOf(`SELECT event_time, iso_utc(event_time_utc) AS event_time_utc FROM ${table} ORDER BY global_position`, []);
      expect(rows, table).to.deep.equal(expected);
    }
  });

  it('refuses eventTime beyond either end on /events and /productsevents, naming the field, storing nothing', async () => {
    for (const eventTime of refused) {
      const event = await storesNothing(app, () => app.ingest(account, 'events', { userId: 'u1', eventName: 'x', eventTime }));
      expect(itemError(event)).to.equal(`eventTime ${rangeMessage}`);
      const productEvent = await storesNothing(app, () =>
        app.ingest(account, 'productsevents', { productId: 'p1', userId: 'u1', eventName: 'x', eventTime }),
      );
      expect(itemError(productEvent)).to.equal(`eventTime ${rangeMessage}`);
    }
  });

  it('answers a poison birth_date 400, and the next profile still reaches the leads read model', async () => {
    const poison = await storesNothing(app, () =>
      app.ingest(account, 'users', { userId: 'poison', birth_date: '9999-12-31T23:59:59-2359', attributes: {} }),
    );
    expect(itemError(poison)).to.equal(`birth_date ${rangeMessage}`);
    queued(await app.ingest(account, 'users', { userId: 'after', attributes: {} }));
    await app.projected();
    expect(await rowsOf('SELECT profile_id FROM leads', [])).to.deep.equal([{ profile_id: 'after' }]);
  });
});
