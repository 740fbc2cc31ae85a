#!/usr/bin/env node
// A warehouse loader (docs/export.md, Loading a warehouse from the feed): copies one account's
// events into a PostgreSQL table, each exactly once, however often it is killed and restarted. It
// stores the feed's cursor in the same transaction as the rows it loaded, so that what it loaded
// and where it resumes never disagree.
//
//   TRACKING_URL=http://localhost:3000 TRACKING_LICENSE_CODE=... TRACKING_ACCESS_TOKEN=<ingest+read token> \
//   LOADER_DATABASE_URL=postgres://localhost/warehouse node docs/examples/feed-loader.mjs
import pg from 'pg';

const url = process.env.TRACKING_URL ?? 'http://localhost:3000';
const license = process.env.TRACKING_LICENSE_CODE;
const token = process.env.TRACKING_ACCESS_TOKEN;
if (!license || !token || !process.env.LOADER_DATABASE_URL) {
  console.error('set TRACKING_LICENSE_CODE, TRACKING_ACCESS_TOKEN and LOADER_DATABASE_URL (and TRACKING_URL)');
  process.exit(2);
}
const pool = new pg.Pool({ connectionString: process.env.LOADER_DATABASE_URL, max: 1 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (stopping = true));

await pool.query(`
  CREATE TABLE IF NOT EXISTS tracking_events (
    event_id uuid PRIMARY KEY, track_id uuid NOT NULL, kind text NOT NULL, event_type text NOT NULL,
    received_at timestamptz NOT NULL, data jsonb NOT NULL, erased jsonb);
  -- One row a load: the cursor it started from and the one it ends at (the next load's start).
  CREATE TABLE IF NOT EXISTS tracking_feed_loads (
    id bigserial PRIMARY KEY, license_code text NOT NULL, after text, next text NOT NULL,
    events integer NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now());`);

const lastCursor = async (db) =>
  (await db.query('SELECT next FROM tracking_feed_loads WHERE license_code = $1 ORDER BY id DESC LIMIT 1', [license])).rows[0]?.next ?? null;

while (!stopping) {
  const after = await lastCursor(pool);
  const query = new URLSearchParams({ limit: '500', wait: '20', ...(after && { after }) });
  let page;
  try {
    const reply = await fetch(`${url}/admin/v1/accounts/${license}/feed?${query}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
    if (!reply.ok) throw new Error(`the feed answered ${reply.status}: ${await reply.text()}`);
    page = await reply.json();
  } catch (error) {
    console.error(`feed-loader: ${error.message}; trying again in a second`);
    await sleep(1000);
    continue;
  }
  if (page.next === null || page.next === after) continue;
  const db = await pool.connect();
  try {
    await db.query('BEGIN');
    // Another loader of the same account may have loaded this page meanwhile: then start again.
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tracking-feed:${license}`]);
    if ((await lastCursor(db)) !== after) {
      await db.query('ROLLBACK');
      continue;
    }
    // ON CONFLICT: EventStoreDB may store an event twice under the same id (docs/export.md).
    await db.query(
      `INSERT INTO tracking_events (event_id, track_id, kind, event_type, received_at, data, erased)
       SELECT "eventId", "trackID", kind, "eventType", "receivedAt", data, erased
       FROM jsonb_to_recordset($1::jsonb) AS e("eventId" uuid, "trackID" uuid, kind text, "eventType" text, "receivedAt" timestamptz, data jsonb, erased jsonb)
       ON CONFLICT (event_id) DO NOTHING`,
      [JSON.stringify(page.events)],
    );
    await db.query('INSERT INTO tracking_feed_loads (license_code, after, next, events) VALUES ($1, $2, $3, $4)', [license, after, page.next, page.events.length]);
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    console.error(`feed-loader: ${error.message}; trying again in a second`);
    await sleep(1000);
  } finally {
    db.release();
  }
}
await pool.end();
