import { expect } from 'chai';
import { attributeCandidates } from '../projections/leads/attribute-filter.js';
import { exactCountCap } from '../projections/leads/count.js';
import { listLeadsSql } from '../projections/leads/queries-sql.js';
import { accountIdOf } from './support/account-replay.js';
import { servedApp, type Credentials, type Reply, type TestApp } from './support/app.js';
import { sleep, until } from './support/eventually.js';

type Page = { leads: { userId: string | null; anonymousId: string | null }[]; nextCursor: string | null; total: { count: number; exact: boolean } };

/**
 * The leads list's total past what it counts exactly, and its attribute filter past the rows it
 * walks in list order (searchBudget), on leads written straight into the read model.
 */

const leads = exactCountCap + 2_000;

/**
 * Lead n: known unless n % 5 = 0; attribute `cohort` c<n % 100>, `seats` n % 7 as a number, and
 * `tier` rare in every 300th (known ones; a page of 50 of them is more than the walk finds).
 */
const fillSql = `INSERT INTO leads (account_id, profile_kind, profile_id, user_id, anonymous_id, opt_in_sms, opt_in_email,
    date_identified, points, attributes, attribute_types, own_keys, anonymous_ids, search_text, version, created_position,
    created_at, changed_at)
  SELECT $1::uuid, kind, id, CASE WHEN kind = 'user' THEN id END, CASE WHEN kind = 'anonymous' THEN id END, false, false,
    now(), 0,
    jsonb_build_object('cohort', 'c' || n % 100, 'seats', n % 7) || CASE WHEN n % 300 = 4 THEN '{"tier":"rare"}'::jsonb ELSE '{}' END,
    '{}', '{}', '{}', id, 1, $2::bigint + n, now(), now()
  FROM (SELECT n, CASE WHEN n % 5 = 0 THEN 'anonymous' ELSE 'user' END AS kind, 'lead-' || n AS id
        FROM generate_series(1, $3::int) AS n) AS g`;

const referenceSql = `SELECT profile_id FROM leads
  WHERE account_id = $1 AND merged_into IS NULL AND attributes -> $2 = $3::jsonb AND ($4::text IS NULL OR profile_kind = $4)
  ORDER BY created_position DESC, profile_kind DESC, profile_id DESC`;

describe('leads list past the exact count and the list walk (int)', function () {
  let app: TestApp;
  let account: Credentials;
  let accountId: string;
  // Long enough for any count here on a loaded machine, short enough for the test that holds a lock.
  const countBudgetMs = 1_000;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', config: { leadsExactCountMs: countBudgetMs } });

  before(async () => {
    const other = await app.account('other');
    accountId = await accountIdOf(app, account);
    // The other account's leads hold the same values and sit in between in the store.
    await app.pool.query(fillSql, [accountId, 0, leads]);
    await app.pool.query(fillSql, [await accountIdOf(app, other), 100_000, leads]);
    await app.pool.query('ANALYZE leads');
  });

  const get = (query: string): Promise<Reply<Page>> => app.get<Page>(`/admin/v1/accounts/${account.licenseCode}/leads?${query}`, `Bearer ${account.accessToken}`);

  it(`estimates a total above ${exactCountCap.toLocaleString('en-US')}, saying so; counts exactly below it`, async () => {
    const all = await get('limit=10');
    expect(all.status).to.equal(200);
    expect(all.body.total.exact).to.equal(false);
    expect(all.body.total.count).to.be.within(exactCountCap + 1, leads * 1.5);
    // Known leads: 4 in 5 of them, below the cap.
    expect((await get('kind=known')).body.total).to.deep.equal({ count: (leads * 4) / 5, exact: true });
    expect((await get('attribute=cohort&value=c7')).body.total).to.deep.equal({ count: leads / 100, exact: true });
    expect((await get('attribute=tier&value=rare&kind=anonymous')).body.total).to.deep.equal({ count: 0, exact: true });
  });

  it('estimates when counting takes longer than it may (here: waiting for a lock), unless the page holds the whole list, and answers the page all the same', async () => {
    const locker = await app.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE leads IN ACCESS EXCLUSIVE MODE');
      const reply = get('attribute=cohort&value=c7');
      const whole = get('attribute=tier&value=rare&limit=100');
      // Both counts wait for the lock; once they are seen waiting, they have their budget, and more.
      await until(
        async () => (await app.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT count(*)::int AS leads%'")).rows[0]?.n === 2,
        10_000,
        () => 'the counts are not waiting for the lock',
      );
      await sleep(countBudgetMs + 300);
      await locker.query('COMMIT');
      const { status, body } = await reply;
      expect(status).to.equal(200);
      expect(body.leads).to.have.length(50);
      expect(body.total.exact).to.equal(false);
      expect(body.total.count).to.be.within(1, leads);
      // A first page holding the whole list is its count.
      expect((await whole).body.total).to.deep.equal({ count: 40, exact: true });
    } finally {
      locker.release();
    }
  });

  it('finds the page of a rare value through the index leads_attributes, of this account only', async () => {
    const plan = await app.pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN ${listLeadsSql({ kind: false, cursor: false, pattern: false, attribute: true, walk: 'unordered' })}`,
      [accountId, 51, attributeCandidates(accountId, ['user', 'anonymous'], { name: 'tier', value: 'rare' })],
    );
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).to.contain('leads_attributes');
  });

  const cases: [name: string, value: string, json: string, kind: 'known' | 'anonymous' | null, limit: number, matches: number][] = [
    ['tier', 'rare', '"rare"', null, 7, 40],
    ['tier', 'rare', '"rare"', 'known', 50, 40],
    ['cohort', 'c42', '"c42"', null, 50, leads / 100],
    ['seats', '3', '3', 'anonymous', 500, 343],
    ['cohort', 'c1000', '"c1000"', null, 50, 0],
  ];
  for (const [name, value, json, kind, limit, matches] of cases) {
    it(`attribute=${name}&value=${value}${kind ? ` kind=${kind}` : ''} limit=${limit}: the plain query's leads, page after page`, async () => {
      const { rows } = await app.pool.query<{ profile_id: string }>(referenceSql, [accountId, name, json, kind === null ? null : kind === 'known' ? 'user' : 'anonymous']);
      const expected = rows.map((r) => r.profile_id);
      expect(expected).to.have.length(matches);
      const got: string[][] = [];
      let cursor: string | null = null;
      do {
        const reply: Reply<Page> = await get(`attribute=${name}&value=${value}&limit=${limit}${kind ? `&kind=${kind}` : ''}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
        expect(reply.body.total).to.deep.equal({ count: matches, exact: true });
        got.push(reply.body.leads.map((l) => (l.userId ?? l.anonymousId) as string));
        cursor = reply.body.nextCursor;
      } while (cursor !== null && got.length < 1_000);
      expect(got.flat()).to.deep.equal(expected);
      for (const page of got.slice(0, -1)) expect(page).to.have.length(limit);
    });
  }
});
