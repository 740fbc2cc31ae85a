import { expect } from 'chai';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CeilingRows, createScratchTable, dropScratch, lastPosition, scratchTable, storedRowsAfter, writableColumns } from '../bench/ceiling-rows.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { accountRefs } from './support/id-refs.js';

/**
 * The bench's raw write ceiling stores again what the service stored: the same rows, apart from a
 * fresh event id and stream name, into a table made like `events`. Were the copies different
 * (quoting lost, a column missing, an index absent), the ceiling would be of other work.
 */

interface Copy {
  stream_name: string;
  event_id: string;
  event_type: string;
  data: unknown;
  metadata: unknown;
}

describe('bench: rows of the raw write ceiling', function () {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started));

  /** A connection of its own, and a directory the server can read COPY files from (it reads them as its own user). */
  async function withClient(work: (client: pg.Client, fileDir: string) => Promise<void>): Promise<void> {
    const client = new pg.Client({ connectionString: app.database.url });
    await client.connect();
    const fileDir = await mkdtemp(join(tmpdir(), 'tracking-ceiling-spec-'));
    try {
      await chmod(fileDir, 0o755);
      await work(client, fileDir);
    } finally {
      await dropScratch(client);
      await client.end();
      await rm(fileDir, { recursive: true, force: true });
    }
  }

  it('are the stored rows with a fresh id and stream name, through INSERT and through COPY alike', () => withClient(async (client, fileDir) => {
    const columns = await writableColumns(client);
    const before = await lastPosition(client);
    // Stored meanwhile, by another request: not a row of the template.
    expect((await app.ingest(account, 'users', { userId: 'other', attributes: {} })).status).to.equal(200);
    const awkward = `O'Brien \\ "quoted"\ttab\nnew line, ünïcödé`;
    const reply = await app.ingest<{ response: { status: string; trackID: string }[] }>(account, 'users/bulk', [
      { userId: 'u-1', firstName: awkward, attributes: { note: awkward } },
      { userId: 'u-2', lastName: 'Plain', attributes: {} },
    ]);
    expect(reply.status).to.equal(200);
    expect(reply.body.response.map((r) => r.status)).to.deep.equal(['queued', 'queued']);
    const template = await storedRowsAfter(client, columns, before, reply.body.response.map((r) => r.trackID));
    // As stored, personal fields sealed: the ceiling writes the rows the service writes.
    const originals = (await app.sealedEvents()).slice(-2);
    expect(template.rows).to.have.length(2);
    // The userIds sealed too: readable beside the box, their pseudonyms.
    const refs = await accountRefs(app, account);
    expect(originals.map((e) => e.data.userRef)).to.deep.equal([refs.user('u-1'), refs.user('u-2')]);
    expect(originals.map((e) => e.data.userId)).to.deep.equal([undefined, undefined]);

    for (const method of ['INSERT', 'COPY'] as const) {
      await createScratchTable(client);
      const rows = new CeilingRows(method, template);
      await rows.write(client, rows.next(4), join(fileDir, 'rows.tsv'));
      const { rows: copies } = await client.query<Copy>(`SELECT stream_name, event_id::text, event_type, data, metadata FROM ${scratchTable} ORDER BY global_position`);

      expect(copies, method).to.have.length(4);
      expect(new Set(copies.map((c) => c.event_id)).size, method).to.equal(4);
      copies.forEach((copy, i) => {
        const original = originals[i % 2];
        if (!original) throw new Error('no original');
        expect(copy.stream_name, method).to.equal(`${original.stream_name}.c${i + 1}`);
        expect(copy.event_id, method).to.not.equal(original.event_id);
        expect(copy.event_type, method).to.equal(original.event_type);
        expect(copy.data, method).to.deep.equal(original.data);
        // The metadata names the event by its id (trackId): the copy's names the copy.
        expect(copy.metadata, method).to.deep.equal(JSON.parse(JSON.stringify(original.metadata).replaceAll(original.event_id, copy.event_id)));
      });
    }
  }));

  it('go into a table with the columns and indexes of events', () => withClient(async (client) => {
    await createScratchTable(client);
    const [schema, table] = scratchTable.split('.');
    const shape = async (inSchema: string, name: string) => ({
      columns: (
        await client.query<{ c: string }>(
          `SELECT concat_ws(' ', column_name, data_type, is_nullable, column_default, is_identity, generation_expression) AS c
           FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
          [inSchema, name],
        )
      ).rows.map((r) => r.c),
      indexes: (
        await client.query<{ d: string }>(
          `SELECT regexp_replace(indexdef, 'INDEX \\S+ ON \\S+', 'INDEX ON') AS d FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY 1`,
          [inSchema, name],
        )
      ).rows.map((r) => r.d),
    });
    const copy = await shape(schema ?? '', table ?? '');
    const events = await shape('public', 'events');
    // Identity columns get a sequence of their own; everything else is alike.
    expect(copy.indexes).to.deep.equal(events.indexes);
    expect(copy.columns).to.deep.equal(events.columns);
    expect(events.indexes.length).to.be.greaterThan(1);
  }));
});
