import { expect } from 'chai';
import { searchBudget, shortSearchBudget } from '../projections/leads/queries.js';
import { servedApp, type Credentials, type Reply, type TestApp } from './support/app.js';

type Page = { leads: { userId: string | null; anonymousId: string | null }[]; nextCursor: string | null };

/**
 * Leads search beyond the rows it walks in list order (searchBudget): whichever way a page is
 * found (the walk, or the trigram index for a term the walk found too few of), the pages are those
 * of the plain query, in order, each lead once, also with ties in created_position.
 */

const leads = searchBudget + 1_500;

/**
 * Lead n: known unless n % 5 = 0; `common` in every second, `medium` in every 250th (too few in
 * the walk for a page), `rare` in three old ones, `qz` (no trigram) in two; rows n and n + 1 share
 * a created_position when n % 7 = 0 (profiles made by one event).
 */
const fillSql = `INSERT INTO leads (account_id, profile_kind, profile_id, user_id, anonymous_id, opt_in_sms, opt_in_email,
    date_identified, points, attributes, attribute_types, own_keys, anonymous_ids, search_text, version, created_position,
    created_at, changed_at)
  SELECT $1::uuid, kind, id, CASE WHEN kind = 'user' THEN id END, CASE WHEN kind = 'anonymous' THEN id END, false, false,
    now(), 0, '{}', '{}', '{}', '{}',
    concat_ws(E'\\n', id, CASE WHEN n % 2 = 0 THEN 'common@mail.test' END, CASE WHEN n % 250 = 3 THEN 'medium' END,
      CASE WHEN n IN (5, 40, 41) THEN 'rare' END, CASE WHEN n IN (17, 90) THEN 'xqzx' END),
    1, $2::bigint + n - CASE WHEN n % 7 = 1 THEN 1 ELSE 0 END, now(), now()
  FROM (SELECT n, CASE WHEN n % 5 = 0 THEN 'anonymous' ELSE 'user' END AS kind, 'lead-' || n AS id
        FROM generate_series(1, $3::int) AS n) AS g`;

const referenceSql = `SELECT profile_id FROM leads
  WHERE account_id = $1 AND merged_into IS NULL AND search_text LIKE $2 AND ($3::text IS NULL OR profile_kind = $3)
  ORDER BY created_position DESC, profile_kind DESC, profile_id DESC`;

describe('leads search past the list walk', function () {
  let app: TestApp;
  let account: Credentials;
  let accountId: string;
  servedApp((started) => ({ app, account } = started), { scope: 'suite' });

  before(async () => {
    const other = await app.account('other');
    const idOf = async (license: string): Promise<string> =>
      (await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [license])).rows[0]?.id as string;
    accountId = await idOf(account.licenseCode);
    // The other account's leads match the same terms and sit in between in the store.
    await app.pool.query(fillSql, [accountId, 0, leads]);
    await app.pool.query(fillSql, [await idOf(other.licenseCode), 100_000, leads]);
    await app.pool.query('ANALYZE leads');
  });

  async function pages(query: string): Promise<string[][]> {
    const result: string[][] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply<Page> = await app.get<Page>(
        `/admin/v1/accounts/${account.licenseCode}/leads?${query}${cursor ? `&cursor=${cursor}` : ''}`,
        `Bearer ${account.accessToken}`,
      );
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
      result.push(reply.body.leads.map((l) => (l.userId ?? l.anonymousId) as string));
      cursor = reply.body.nextCursor;
    } while (cursor !== null && result.length < 1_000);
    return result;
  }

  async function reference(term: string, kind: string | null): Promise<string[]> {
    const { rows } = await app.pool.query<{ profile_id: string }>(referenceSql, [accountId, `%${term}%`, kind]);
    return rows.map((r) => r.profile_id);
  }

  const cases: [term: string, kind: 'known' | 'anonymous' | null, limit: number, matches: number][] = [
    ['rare', null, 50, 3],
    ['rare', 'known', 1, 1],
    ['medium', null, 7, 26],
    ['medium', 'anonymous', 50, 0],
    ['xqzx', null, 50, 2],
    ['qz', null, 1, 2],
    ['common@mail', null, 500, leads / 2],
    ['common@mail', 'anonymous', 300, leads / 10],
    ['lead-1', 'known', 500, 0],
  ];
  for (const [term, kind, limit, matches] of cases) {
    it(`q=${term}${kind ? ` kind=${kind}` : ''} limit=${limit}: the plain query's leads, page after page`, async () => {
      const expected = await reference(term, kind === null ? null : kind === 'known' ? 'user' : 'anonymous');
      if (matches > 0) expect(expected).to.have.length(matches);
      const got = await pages(`q=${encodeURIComponent(term)}&limit=${limit}${kind ? `&kind=${kind}` : ''}`);
      expect(got.flat()).to.deep.equal(expected);
      for (const page of got.slice(0, -1)) expect(page).to.have.length(limit);
    });
  }
});

describe('leads search of a term shorter than a trigram, past the rows a request walks', function () {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite' });
  const many = shortSearchBudget + 1_500;

  before(async () => {
    const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    await app.pool.query(fillSql, [rows[0]?.id, 0, many]);
    await app.pool.query('ANALYZE leads');
  });

  it('answers a page short of the limit, even empty, with a cursor that goes on from the last row walked, until the oldest match', async () => {
    const seen: Page[] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply<Page> = await app.get<Page>(
        `/admin/v1/accounts/${account.licenseCode}/leads?q=qz&limit=50${cursor ? `&cursor=${cursor}` : ''}`,
        `Bearer ${account.accessToken}`,
      );
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
      seen.push(reply.body);
      cursor = reply.body.nextCursor;
    } while (cursor !== null && seen.length < 10);
    // The two matches are among the oldest leads: the first request walks 50,000 newer ones.
    expect(seen.map((p) => p.leads.map((l) => l.userId ?? l.anonymousId))).to.deep.equal([[], ['lead-90', 'lead-17']]);
    expect(seen[0]?.nextCursor).to.be.a('string');
  });
});
