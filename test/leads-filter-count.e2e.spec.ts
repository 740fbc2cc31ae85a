import { expect } from 'chai';
import { servedApp, type Credentials, type Reply, type TestApp } from './support/app.js';
import { bulkResults, queued, requestError } from './support/replies.js';

/**
 * The leads list's total and its filter by a custom attribute, through the ingest API, the
 * projections and the read API over real HTTP (docs/api.md, Leads).
 */

interface ListedLead {
  userId: string | null;
  anonymousId: string | null;
}
interface LeadPage {
  leads: ListedLead[];
  nextCursor: string | null;
  total: { count: number; exact: boolean };
}

const hostile = `'; DROP TABLE leads; --`;

describe('leads list: total count and custom attribute filter (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  before(async () => {
    other = await app.account('Globex');
    const users = [
      { userId: 'gold-1', firstName: 'Ann', attributes: { plan: 'gold', seats: 12, trial: true, renews_at: '2026-12-01T11:00:00+01:00' } },
      { userId: 'gold-2', firstName: 'Bo', attributes: { plan: 'gold', seats: 3, trial: false } },
      { userId: 'silver-1', firstName: 'Cy', attributes: { plan: 'silver', seats: 12.5, note: hostile } },
      { userId: 'odd-1', attributes: { plan: '%', code: '12', shape: '{"plan":"gold"}' } },
      { anonymousId: 'anon-gold', attributes: { plan: 'gold' } },
      // Merged into gold-1: not listed, not counted.
      { anonymousId: 'anon-merged', attributes: { plan: 'gold' } },
    ];
    for (const result of bulkResults(await app.ingest(account, 'users/bulk', users))) expect(result.status).to.equal('queued');
    queued(await app.ingest(account, 'users', { userId: 'gold-1', anonymousId: 'anon-merged', attributes: {} }));
    // Another account's leads hold the same values.
    const theirs = Array.from({ length: 5 }, (_, i) => ({ userId: `globex-${i}`, attributes: { plan: 'gold', seats: 12, only_theirs: 'x' } }));
    for (const result of bulkResults(await app.ingest(other, 'users/bulk', theirs))) expect(result.status).to.equal('queued');
    await app.projected();
  });

  const list = (query: string, who: Credentials = account): Promise<Reply<LeadPage>> =>
    app.get<LeadPage>(`/admin/v1/accounts/${who.licenseCode}/leads?${query}`, `Bearer ${who.accessToken}`);
  const ids = (page: LeadPage) => page.leads.map((lead) => lead.userId ?? lead.anonymousId);
  async function found(query: string, who: Credentials = account): Promise<{ ids: (string | null)[]; total: LeadPage['total'] }> {
    const reply = await list(query, who);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return { ids: ids(reply.body), total: reply.body.total };
  }
  const filter = (attribute: string, value: string) => `attribute=${encodeURIComponent(attribute)}&value=${encodeURIComponent(value)}`;

  it('counts the leads of the filters exactly, every page: merged anonymous profiles and other accounts left out', async () => {
    expect(await found('limit=2')).to.deep.include({ total: { count: 5, exact: true } });
    expect((await found('kind=anonymous')).total).to.deep.equal({ count: 1, exact: true });
    expect((await found('kind=known&limit=1')).total).to.deep.equal({ count: 4, exact: true });
    expect((await found('q=gold')).total).to.deep.equal({ count: 3, exact: true });
    expect((await found('limit=500', other)).total).to.deep.equal({ count: 5, exact: true });
    // The second page counts the same list.
    const first = await list('limit=2');
    expect((await found(`limit=2&cursor=${first.body.nextCursor ?? ''}`)).total).to.deep.equal({ count: 5, exact: true });
  });

  it('filters by a custom attribute: text, numbers, booleans and date-times as sent, newest first, with the count of the matches', async () => {
    expect(await found(filter('plan', 'gold'))).to.deep.equal({ ids: ['anon-gold', 'gold-2', 'gold-1'], total: { count: 3, exact: true } });
    expect((await found(filter('seats', '12'))).ids).to.deep.equal(['gold-1']);
    expect((await found(filter('seats', '12.0'))).ids).to.deep.equal(['gold-1']);
    expect((await found(filter('seats', '12.5'))).ids).to.deep.equal(['silver-1']);
    // The text "12" and the number 12 are both found by 12.
    expect((await found(filter('code', '12'))).ids).to.deep.equal(['odd-1']);
    expect((await found(filter('trial', 'false'))).ids).to.deep.equal(['gold-2']);
    // A date-time finds the instant it names, in another form too.
    expect((await found(filter('renews_at', '2026-12-01T10:00:00Z'))).ids).to.deep.equal(['gold-1']);
    expect((await found(filter('renews_at', '2026-12-01T11:00:00+01:00'))).ids).to.deep.equal(['gold-1']);
    expect((await found(filter('renews_at', '2026-12-01T10:00:00.000000Z'))).ids).to.deep.equal(['gold-1']);
    // Exact values only: no prefix, no other case.
    expect(await found(filter('plan', 'Gold'))).to.deep.equal({ ids: [], total: { count: 0, exact: true } });
    expect((await found(filter('plan', 'gol'))).ids).to.deep.equal([]);
    // With the other filters, and paged.
    expect((await found(`${filter('plan', 'gold')}&kind=known`)).ids).to.deep.equal(['gold-2', 'gold-1']);
    expect(await found(`${filter('plan', 'gold')}&q=ann`)).to.deep.equal({ ids: ['gold-1'], total: { count: 1, exact: true } });
    const pages: (string | null)[][] = [];
    let cursor = '';
    do {
      const reply = await list(`${filter('plan', 'gold')}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(ids(reply.body));
      expect(reply.body.total).to.deep.equal({ count: 3, exact: true });
      cursor = reply.body.nextCursor ?? '';
    } while (cursor);
    expect(pages).to.deep.equal([['anon-gold'], ['gold-2'], ['gold-1']]);
  });

  it('takes a hostile value as data: SQL, LIKE wildcards, JSON text and odd numbers match only themselves', async () => {
    expect((await found(filter('note', hostile))).ids).to.deep.equal(['silver-1']);
    expect((await found(filter('plan', '%'))).ids).to.deep.equal(['odd-1']);
    expect((await found(filter('plan', '_'))).ids).to.deep.equal([]);
    expect((await found(filter('shape', '{"plan":"gold"}'))).ids).to.deep.equal(['odd-1']);
    expect((await found(filter('plan', '{"plan":"gold"}'))).ids).to.deep.equal([]);
    for (const odd of ['1e999', '-1e999', '1e-99999', '0x10', 'NaN', 'Infinity', '-0', '9'.repeat(400), '🙂', ' gold', '\\']) {
      expect((await found(filter('plan', odd))).ids, odd).to.deep.equal([]);
    }
    // The leads table is still there.
    expect((await found('')).total.count).to.equal(5);
  });

  it("never matches or counts another account's leads, whatever the filter", async () => {
    // Only the other account holds this attribute.
    expect(await found(filter('only_theirs', 'x'))).to.deep.equal({ ids: [], total: { count: 0, exact: true } });
    expect(await found(filter('seats', '12'), other)).to.deep.equal({
      ids: ['globex-4', 'globex-3', 'globex-2', 'globex-1', 'globex-0'],
      total: { count: 5, exact: true },
    });
    expect((await found(filter('plan', 'gold'), other)).total).to.deep.equal({ count: 5, exact: true });
    // Another account's token is refused outright.
    expect((await list(filter('plan', 'gold'), { licenseCode: account.licenseCode, accessToken: other.accessToken })).status).to.equal(401);
  });

  it('answers 400 naming the parameter for an attribute that cannot be one, a value too long, or one of the two alone', async () => {
    const cases: [string, string][] = [
      [filter('Plan', 'gold'), 'attribute must be the name of a custom attribute'],
      [filter('plan;drop', 'gold'), 'attribute must be the name of a custom attribute'],
      [filter('attributes.plan', 'gold'), 'attribute must be the name of a custom attribute'],
      [filter('a'.repeat(101), 'gold'), 'attribute must be the name of a custom attribute'],
      [filter('plan', 'g'.repeat(1001)), 'value must be at most 1000 characters'],
      ['value=gold', 'value needs attribute'],
      ['attribute=plan', 'attribute needs value'],
      ['attribute=plan&attribute=seats&value=1', 'attribute must be given once'],
    ];
    for (const [query, message] of cases) expect(requestError(await list(query), 400), query).to.contain(message);
    // An empty attribute is no filter.
    expect((await found('attribute=')).total.count).to.equal(5);
    expect((await found(filter('plan', 'g'.repeat(1000)))).ids).to.deep.equal([]);
  });

  it("gives a timeline event's time as the UTC instant beside the time as sent", async () => {
    queued(await app.ingest(account, 'events', { userId: 'gold-2', eventName: 'Zoneless', eventTime: '2026-03-01T10:00:00' }));
    queued(await app.ingest(account, 'events', { userId: 'gold-2', eventName: 'Berlin', eventTime: '2026-03-01T14:58:00+01:00' }));
    await app.projected();
    const reply = await app.get<{ entries: { kind: string; eventName?: string; eventTime?: string; eventTimeUtc?: string }[] }>(
      `/admin/v1/accounts/${account.licenseCode}/leads/gold-2/timeline`,
      `Bearer ${account.accessToken}`,
    );
    expect(reply.status).to.equal(200);
    const events = reply.body.entries.filter((entry) => entry.kind === 'event').map(({ eventName, eventTime, eventTimeUtc }) => ({ eventName, eventTime, eventTimeUtc }));
    expect(events).to.deep.equal([
      { eventName: 'Berlin', eventTime: '2026-03-01T14:58:00+01:00', eventTimeUtc: '2026-03-01T13:58:00.000000Z' },
      { eventName: 'Zoneless', eventTime: '2026-03-01T10:00:00', eventTimeUtc: '2026-03-01T10:00:00.000000Z' },
    ]);
  });
});
