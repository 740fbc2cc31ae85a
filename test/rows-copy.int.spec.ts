import { expect } from 'chai';
import pg from 'pg';
import { isDataError, sqlstateOf } from '../projections/runner/apply-errors.js';
import { insertRows, writeRows } from '../projections/rows-sql.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/**
 * Projections write rows through COPY into a staging table (projections/rows-sql.ts); before, the
 * rows went as JSON through json_populate_recordset. The rows must come out the same, value for
 * value, whatever the text holds.
 */

const columns = ['id', 't', 'i', 'b', 'ts', 'j', 'a'];
const scratch = insertRows('scratch', columns, '(id) DO UPDATE SET t = excluded.t, i = excluded.i, b = excluded.b, ts = excluded.ts, j = excluded.j, a = excluded.a', {
  j: 'jsonb',
  a: 'text[]',
});
const asJson = `SELECT ${columns.join(', ')} FROM json_populate_recordset(NULL::scratch, $1::json) ORDER BY id`;
const written = `SELECT ${columns.join(', ')} FROM scratch ORDER BY id`;

const awkward = ['tab\there', 'line\nbreak', 'carriage\rreturn', 'back\\slash', '\\N', '"quoted"', "it's", '', ' ', 'zoë Ávila 😀', 'a,b', '{braces}', 'NULL', 'x\\ty'];

const rows = [
  ...awkward.map((text, index) => ({ id: index, t: text, j: { text, nested: [text, { text }] }, a: [text, 'plain', text] })),
  { id: 100, t: 42, i: 7, b: true, ts: '2024-05-01T10:30:00.123456Z', j: 'a string', a: [] },
  { id: 101, t: true, i: '8', b: false, ts: '2024-05-01T12:30:00+02:00', j: 12.5, a: ['only'] },
  { id: 102, t: { an: 'object' }, i: null, b: null, ts: null, j: [1, 'two', null], a: null },
  { id: 103, t: null, j: { deep: { deeper: ['\t', '\n', '\\'] } } },
  { id: 104 },
];

describe('rows written through COPY (int)', () => {
  let database: TestDatabase;
  let client: pg.Client;

  beforeEach(async () => {
    database = await freshDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('CREATE TABLE scratch (id integer PRIMARY KEY, t text, i integer, b boolean, ts timestamptz, j jsonb, a text[])');
  });

  afterEach(async () => {
    await client.end();
    await database.drop();
  });

  /** As a projection's apply does: in the batch's transaction. */
  const write = async (...args: Parameters<typeof writeRows> extends [unknown, unknown, ...infer Rest] ? Rest : never): Promise<number> => {
    await client.query('BEGIN');
    const count = await writeRows(client, scratch, ...args);
    await client.query('COMMIT');
    return count;
  };

  it('stores every value as json_populate_recordset read it from the JSON of the row', async () => {
    expect(await write(rows)).to.equal(rows.length);
    const expected = (await client.query(asJson, [JSON.stringify(rows)])).rows;
    expect((await client.query(written)).rows).to.deep.equal(expected);
    expect(expected.find((r: { id: number }) => r.id === 4)).to.include({ t: '\\N' });
  });

  it('copies in as many parts as the text bound takes, and writes them in one insert', async () => {
    const many = Array.from({ length: 50 }, (_, id) => ({ id, t: `row ${id}`, a: ['x'] }));
    expect(await write(many, 64)).to.equal(50);
    expect((await client.query<{ n: number }>('SELECT count(*)::int AS n FROM scratch')).rows).to.deep.equal([{ n: 50 }]);
  });

  it('lets two writes of one transaction see none of each other rows: the later upsert keeps its own values', async () => {
    await client.query('BEGIN');
    await writeRows(client, scratch, [{ id: 1, t: 'first' }]);
    await writeRows(client, scratch, [{ id: 2, t: 'second' }]);
    await writeRows(client, scratch, [{ id: 1, t: 'third' }]);
    await client.query('COMMIT');
    expect((await client.query(written)).rows.map((r: { id: number; t: string }) => [r.id, r.t])).to.deep.equal([
      [1, 'third'],
      [2, 'second'],
    ]);
  });

  it('refuses a value the column cannot take with a data error, and the session writes again after the rollback', async () => {
    await client.query('BEGIN');
    const error: unknown = await writeRows(client, scratch, [{ id: 1, i: 'not a number' }]).then(
      () => null,
      (e: unknown) => e,
    );
    await client.query('ROLLBACK');
    expect(sqlstateOf(error)).to.equal('22P02');
    expect(isDataError(error)).to.equal(true);
    expect(await write([{ id: 1, i: 3 }])).to.equal(1);
    expect((await client.query('SELECT id, i FROM scratch')).rows).to.deep.equal([{ id: 1, i: 3 }]);
  });

  it('refuses a lone surrogate, which has no UTF-8 form, as an error of the event rather than storing U+FFFD', async () => {
    const error: unknown = await write([{ id: 1, t: 'half \ud800 of a pair' }]).then(
      () => null,
      (e: unknown) => e,
    );
    await client.query('ROLLBACK');
    expect(error).to.be.instanceOf(Error);
    expect(isDataError(error)).to.equal(true);
    expect((await client.query('SELECT count(*)::int AS n FROM scratch')).rows).to.deep.equal([{ n: 0 }]);
  });

  it('refuses to run outside a transaction, where each COPY would commit its rows away', async () => {
    const error: unknown = await writeRows(client, scratch, [{ id: 1, t: 'lost' }]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String(error)).to.match(/staged 0 of 1 rows of scratch/);
  });
});
