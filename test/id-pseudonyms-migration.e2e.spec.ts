import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { expect } from 'chai';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { withDatabase } from '../src/db/pool.js';
import { streams } from '../src/eventstore/events.js';
import { IdRefs } from '../src/eventstore/pseudonyms.js';
import { createLogger } from '../src/logger.js';
import { migrationsDir } from '../src/paths.js';
import { TestApp } from './support/app.js';
import { asAdmin } from './support/database.js';
import { databaseText } from './support/database-text.js';
import { eventually } from './support/eventually.js';

const accountId = '22222222-2222-4222-8222-222222222222';
const kept = 'kept.person@example.com';
const gone = 'gone.person@example.com';
const anonymous = 'anon-of-kept-0001';

describe('id pseudonyms: the migration of what was stored before (e2e)', () => {
  it('renames person streams, keys, suppressions, merges and erasures to pseudonyms computed as the service computes them, and drops the ids of people already erased, then of those erased later', async function () {
    this.timeout(60_000);
    const name = `tracking_pseudonyms_migration_${process.pid}`;
    const serverUrl = (await asAdmin(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${name}`);
      await client.query(`CREATE DATABASE ${name}`);
      return `postgres://${client.user}:${encodeURIComponent(String(client.password ?? ''))}@${client.host}:${client.port}/postgres`;
    })) as string;
    const url = withDatabase(serverUrl, name);
    const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const client = new pg.Client({ connectionString: url });
    try {
      const names = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort();
      const before = names.findIndex((f) => f.includes('_id-pseudonyms'));
      await runner({ databaseUrl: url, dir: migrationsDir, direction: 'up', count: before, migrationsTable: 'pgmigrations', logger: quiet });
      await client.connect();
      await client.query("INSERT INTO accounts (id, name, license_code) VALUES ($1, 'Old', 'bbbbbbbbbbbbbbbbbbbbbbbb')", [accountId]);
      const key = async (person: string, erased: boolean): Promise<number> =>
        (
          await client.query<{ key_id: string }>(
            'INSERT INTO person_keys (account_id, person_id, key, erased_at) VALUES ($1, $2, $3, $4) RETURNING key_id',
            [accountId, person, erased ? null : randomBytes(32), erased ? new Date() : null],
          )
        ).rows[0]?.key_id as unknown as number;
      const keptKey = await key(`u:${kept}`, false);
      const goneKey = await key(`u:${gone}`, true);
      const event = (stream: string, data: object): Promise<unknown> =>
        client.query(
          `INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata) VALUES ($1, 0, gen_random_uuid(), 'EventTracked', $2, $3)`,
          [stream, data, { trackId: '00000000-0000-4000-8000-000000000001', accountId, receivedAt: new Date().toISOString(), schemaVersion: 1 }],
        );
      await event(`user-${accountId}-${kept}`, { userId: kept, eventTimeUtc: '2026-01-01T00:00:00.000Z', sealed: { k: Number(keptKey), b: 'AAAA' } });
      await event(`user-${accountId}-${gone}`, { userId: gone, eventTimeUtc: '2026-01-01T00:00:00.000Z', sealed: { k: Number(goneKey), b: 'AAAA' } });
      await event(`anonymous-${accountId}-${anonymous}`, { anonymousId: anonymous, eventTimeUtc: '2026-01-01T00:00:00.000Z', sealed: { k: Number(keptKey), b: 'AAAA' } });
      await client.query("INSERT INTO identity_merges (account_id, anonymous_id, user_id, merge_event_id) VALUES ($1, $2, $3, gen_random_uuid())", [accountId, anonymous, kept]);
      const erasure = (await client.query<{ id: string }>("INSERT INTO erasures (id, account_id, user_id, requested_by, state) VALUES (gen_random_uuid(), $1, $2, 'cli', 'done') RETURNING id", [accountId, gone])).rows[0]?.id;
      await client.query('INSERT INTO suppressed_ids (account_id, person_id, erasure_id) VALUES ($1, $2, $3)', [accountId, `u:${gone}`, erasure]);

      await migrate(url, createLogger('silent'));

      const stored = (await client.query<{ key: Buffer }>('SELECT key FROM account_id_keys WHERE account_id = $1', [accountId])).rows[0]?.key as Buffer;
      expect(stored).to.have.length(32);
      const refs = new IdRefs(accountId, stored);
      const { rows: events } = await client.query<{ stream_name: string; data: Record<string, unknown> }>('SELECT stream_name, data FROM events ORDER BY global_position');
      expect(events.map((e) => e.stream_name)).to.deep.equal([
        streams.user(accountId, refs.user(kept)),
        streams.user(accountId, refs.user(gone)),
        streams.anonymous(accountId, refs.anonymous(anonymous)),
      ]);
      // A living person's ids stay readable beside their pseudonyms (their box does not hold them); an erased one's go.
      expect(events[0]?.data).to.include({ userId: kept, userRef: refs.user(kept) });
      expect(events[1]?.data).to.include({ userRef: refs.user(gone) }).and.not.to.have.property('userId');
      expect(events[2]?.data).to.include({ anonymousId: anonymous, anonymousRef: refs.anonymous(anonymous) });
      const persons = (await client.query<{ person_id: string }>('SELECT person_id FROM person_keys ORDER BY key_id')).rows.map((r) => r.person_id);
      expect(persons).to.deep.equal([`u:${refs.user(kept)}`, `u:${refs.user(gone)}`]);
      expect((await client.query('SELECT person_id FROM suppressed_ids')).rows).to.deep.equal([{ person_id: `u:${refs.user(gone)}` }]);
      expect((await client.query('SELECT anonymous_ref, user_ref, anonymous_id, user_id FROM identity_merges')).rows).to.deep.equal([
        { anonymous_ref: refs.anonymous(anonymous), user_ref: refs.user(kept), anonymous_id: anonymous, user_id: kept },
      ]);
      expect((await client.query('SELECT user_id, user_ref FROM erasures')).rows).to.deep.equal([{ user_id: null, user_ref: refs.user(gone) }]);
      const { rows: text } = await client.query<{ row: string }>('SELECT t::text AS row FROM events t UNION ALL SELECT t::text FROM person_keys t UNION ALL SELECT t::text FROM erasures t UNION ALL SELECT t::text FROM suppressed_ids t');
      expect(text.map((r) => r.row).join('\n')).not.to.contain(gone);

      // Erased now, the living person's old events lose the ids they still held readable.
      const app = await TestApp.start({}, { database: { name, url, drop: async () => undefined } });
      try {
        const id = (await client.query<{ id: string }>("INSERT INTO erasures (id, account_id, user_id, user_ref, requested_by) VALUES (gen_random_uuid(), $1, $2, $3, 'cli') RETURNING id", [accountId, kept, refs.user(kept)])).rows[0]?.id;
        app.services.erasures.wake();
        await eventually(async () => ((await client.query<{ state: string }>('SELECT state FROM erasures WHERE id = $1', [id])).rows[0]?.state === 'done' ? true : undefined), 30_000, () => 'the erasure never finished');
        const after = await databaseText(app.pool);
        expect(after).not.to.contain(kept).and.not.to.contain(anonymous);
        expect(after).to.contain(refs.user(kept)).and.contain(refs.anonymous(anonymous));
      } finally {
        await app.stop();
      }
    } finally {
      await client.end().catch(() => undefined);
      await asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  });
});
