import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import express from 'express';
import pg from 'pg';

/**
 * The peer of `npm run bench`: what a user would write instead of the service. Express 5 and a
 * pg.Pool of 20, one durable INSERT of the event row per request into a table shaped like `events`
 * (naive_events, LIKE events INCLUDING ALL: its indexes, identity and generated columns), on the
 * service's own PostgreSQL; no validation, no credentials, no idempotency, no per-stream order.
 * Same keep-alive timeout as the service. DATABASE_URL: the service's database.
 */
const table = 'naive_events';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (LIKE events INCLUDING ALL)`);
await pool.query(`TRUNCATE ${table}`);

const insert = `INSERT INTO ${table} (stream_name, stream_position, event_id, event_type, data, metadata) VALUES ($1, 0, $2, $3, $4, $5)`;

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
for (const [kind, type] of [['users', 'UserUpserted'], ['events', 'EventTracked'], ['productsevents', 'ProductEventTracked']] as const) {
  app.post(`/v1/accounts/:license/${kind}`, express.json(), async (req, res) => {
    const trackId = randomUUID();
    const metadata = { accountId: req.params.license, trackId, receivedAt: new Date().toISOString() };
    // A stream of its own per event: the peer keeps no order, so it never conflicts on a position.
    await pool.query(insert, [`${kind}-${trackId}`, trackId, type, req.body, metadata]);
    res.json({ response: { status: 'queued', trackID: trackId } });
  });
}

const server = createServer({ keepAliveTimeout: 5_000 }, app);
server.listen(Number(process.env.PORT ?? 3200));
process.once('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
