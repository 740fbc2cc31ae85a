import { createServer } from 'node:http';
import express from 'express';

// The reference point of `npm run bench`: Express 5 parsing a small JSON body and answering, with
// no auth, validation or storage. Same keep-alive timeout as the service.
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/hello', express.json(), (_req, res) => {
  res.json({ ok: true });
});

const server = createServer({ keepAliveTimeout: 5_000 }, app);
server.listen(Number(process.env.PORT ?? 3100));
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
