import { expect } from 'chai';
import { connect } from 'node:net';
import { createAccount } from '../src/accounts/accounts.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../src/server.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/** What came back on a raw connection until the server closed it. */
interface RawReply {
  status: number;
  headers: string;
  body: unknown;
}

/** Sends `request` as is on a new connection, leaves the connection open, and reads until the server closes it. */
function rawRequest(port: number, request: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n', 2);
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // left as text for the assertion to show
      }
      resolve({ status, headers: head.toLowerCase(), body: parsed });
    });
  });
}

/** The errors Node's HTTP server answers before the app sees a request, through the service's own server. */
describe('HTTP limits of the server: oversized headers and stalled requests (e2e)', () => {
  let database: TestDatabase;
  let service: RunningService;

  before(async () => {
    database = await freshDatabase();
    const config = { ...loadConfig({}), databaseUrl: database.url, port: 0, requestTimeoutSeconds: 1, runProjections: false };
    service = await startService(config, createLogger('silent'));
  });

  after(async () => {
    await service?.stop();
    await database?.drop();
  });

  it('answers headers over the limit with 431 form A', async () => {
    const reply = await rawRequest(service.port, `GET /healthz HTTP/1.1\r\nHost: test\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(reply.status).to.equal(431);
    expect(reply.headers).to.contain('content-type: application/json');
    expect(reply.body).to.deep.equal({ error: 'request headers are too large', code: 431 });
  });

  it('answers a body that stops arriving with 408 form A after REQUEST_TIMEOUT_SECONDS', async function () {
    // Node's default would hold the request for 300 s: the reply must come well within this test's time.
    this.timeout(8_000);
    const { licenseCode, accessToken } = await createAccount(service.services.pool, 'stalled');
    const started = Date.now();
    const reply = await rawRequest(
      service.port,
      `POST /v1/accounts/${licenseCode}/events HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${accessToken}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"userId":',
    );
    expect(reply.status).to.equal(408);
    expect(reply.headers).to.contain('connection: close');
    expect(reply.body).to.deep.equal({ error: 'the request did not arrive in full within 1 s', code: 408 });
    expect(Date.now() - started, 'not before the timeout').to.be.at.least(1_000);
    const { rows } = await service.services.pool.query('SELECT count(*)::int AS n FROM events');
    expect(rows[0]).to.deep.equal({ n: 0 });
  });

  it('answers headers that stop arriving with 408 form A', async function () {
    this.timeout(8_000);
    const reply = await rawRequest(service.port, 'POST /v1/accounts/0123456789abcdef01234567/events HTTP/1.1\r\nHost: test\r\n');
    expect(reply.status).to.equal(408);
    expect(reply.body).to.deep.equal({ error: 'the request did not arrive in full within 1 s', code: 408 });
  });

  it('answers a request it cannot parse with 400 form A', async () => {
    const reply = await rawRequest(service.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(reply.status).to.equal(400);
    expect(reply.body).to.deep.equal({ error: 'bad request: the request could not be read', code: 400 });
  });
});
