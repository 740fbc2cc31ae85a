import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { loadConfig } from '../src/config.js';
import { logFormat } from '../src/logger.js';
import { projectRoot } from '../src/paths.js';
import { startService } from '../src/server.js';
import { adminToken, TestApp } from './support/app.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { allowConnections } from './support/event-stores.js';
import { eventually } from './support/eventually.js';
import { capturedLog, type LogLine } from './support/log-lines.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('operations: request ids and health (e2e)', () => {
  let app: TestApp;
  let lines: LogLine[];

  beforeEach(async () => {
    const capture = capturedLog('debug');
    lines = capture.lines;
    app = await TestApp.start({}, { log: capture.log });
  });
  afterEach(() => app.stop());

  it('takes a sane X-Request-Id, echoes it, and puts it on the access line and the lines the route logs', async () => {
    const reply = await app.request('POST', '/admin/v1/accounts', { name: 'Acme' }, { authorization: `Bearer ${adminToken}`, headers: { 'x-request-id': 'lb-7f3a:0001' } });
    expect(reply.status).to.equal(201);
    expect(reply.headers.get('x-request-id')).to.equal('lb-7f3a:0001');
    const ofRequest = lines.filter((line) => line.requestId === 'lb-7f3a:0001');
    expect(ofRequest.map((line) => line.msg)).to.deep.equal(['account created', 'request']);
    expect(ofRequest[1]).to.include({ route: '/admin/v1/accounts', status: 201, method: 'POST' });
    // The access line has the route pattern and the figures, not the request's headers.
    expect(Object.keys(ofRequest[1] ?? {}).sort()).to.deep.equal(['level', 'method', 'ms', 'msg', 'requestId', 'route', 'service', 'status', 'time'].sort());
  });

  it('makes a UUID when the request has no id, or one too long or with odd characters, and never logs the odd one', async () => {
    const odd = ['x'.repeat(129), 'two words', '<script>'];
    const replies = [await app.get('/livez'), ...(await Promise.all(odd.map((id) => app.request('GET', '/livez', undefined, { headers: { 'x-request-id': id } }))))];
    const ids = replies.map((reply) => reply.headers.get('x-request-id') ?? '');
    for (const id of ids) expect(id).to.match(uuid);
    expect(new Set(ids).size).to.equal(4);
    const access = lines.filter((line) => line.msg === 'request');
    expect(access.map((line) => line.requestId).sort()).to.deep.equal([...ids].sort());
    const everything = JSON.stringify(lines);
    for (const id of odd) expect(everything).not.to.contain(id);
  });

  it('answers /livez, /readyz and /healthz 200 while it can store data', async () => {
    for (const path of ['/livez', '/readyz', '/healthz']) {
      const reply = await app.get(path);
      expect(reply.status, path).to.equal(200);
      expect(reply.body).to.deep.equal({ status: 'ok' });
    }
  });
});

describe('operations: listen address and start-up warnings (e2e)', () => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(() => database.drop());

  const start = async (overrides: { host?: string; adminToken?: string }) => {
    const capture = capturedLog('debug');
    const config = { ...loadConfig({}), databaseUrl: database.url, port: 0, runProjections: false, ...overrides };
    const service = await startService(config, capture.log);
    return { service, lines: capture.lines };
  };

  it('listens on HOST only, and warns at start that without ADMIN_TOKEN accounts cannot be created over HTTP', async () => {
    const { service, lines } = await start({ host: '127.0.0.1' });
    try {
      expect(lines.find((line) => line.msg === 'tracking ingestion service listening')).to.include({ address: '127.0.0.1', port: service.port });
      const warning = lines.find((line) => /ADMIN_TOKEN is not set/.test(line.msg));
      expect(warning?.level).to.equal(40);
      expect(warning?.msg).to.contain('POST /admin/v1/accounts answers 401');
      // Not reachable on another address of this machine, when it has one.
      const other = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
      if (other) {
        const refused = await fetch(`http://${other.address}:${service.port}/livez`).then(() => false, () => true);
        expect(refused, `connection to ${other.address} refused`).to.equal(true);
      }
    } finally {
      await service.stop();
    }
  });

  it('listens on every interface without HOST, and has no warning with ADMIN_TOKEN set', async () => {
    const { service, lines } = await start({ adminToken: 'set' });
    try {
      expect(lines.find((line) => line.msg === 'tracking ingestion service listening')?.address).to.be.oneOf(['::', '0.0.0.0']);
      expect(lines.filter((line) => /ADMIN_TOKEN/.test(line.msg))).to.deep.equal([]);
    } finally {
      await service.stop();
    }
  });
});

describe('operations: the worker endpoint (e2e)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let worker: ChildProcess | null = null;

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await allowConnections(database, true);
    if (worker && worker.exitCode === null) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await database.drop();
  });

  /** The status and body of GET path on the worker once `until` holds for its status, within 20 s; `output`: the worker's, for a failure. */
  async function poll(base: string, path: string, until: (status: number) => boolean, output: () => string): Promise<{ status: number; body: Record<string, unknown> }> {
    let last = { status: 0, body: {} as Record<string, unknown> };
    return eventually(
      async () => {
        const response = await fetch(base + path).catch(() => null);
        if (response) last = { status: response.status, body: (await response.json()) as Record<string, unknown> };
        return until(last.status) && last;
      },
      20_000,
      () => `GET ${path} on the worker still answers ${last.status} ${JSON.stringify(last.body)}; its output: ${output()}`,
      100,
    );
  }

  it('serves /livez, /readyz (database reachable, the projection worker holding parts or standing by) and /metrics on WORKER_PORT, logging pretty with LOG_FORMAT=pretty', async () => {
    const started = spawn(resolve(projectRoot, 'node_modules/.bin/node'), [resolve(projectRoot, 'dist/src/worker-main.js')], {
      env: { ...process.env, DATABASE_URL: database.url, WORKER_PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker = started;
    let output = '';
    started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // The worker takes a free port (WORKER_PORT=0) and logs it: a pretty line, then its fields.
    const loggedPort = (): Promise<string> =>
      eventually(
        () => {
          const port = /projection worker started.*\n\s+port: (\d+)/.exec(output)?.[1];
          if (!port && started.exitCode !== null) throw new Error(`the worker exited with ${started.exitCode} before it logged its port: ${output}`);
          return port;
        },
        30_000,
        () => `the worker did not log its port: ${output}`,
      );
    const base = `http://127.0.0.1:${await loggedPort()}`;

    const ready = await poll(base, '/readyz', (status) => status === 200, () => output);
    expect(ready, output).to.deep.equal({ status: 200, body: { status: 'ok', projectionWorker: 'active' } });
    expect((await fetch(`${base}/livez`)).status).to.equal(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.contain('tracking_projection_active{projection="leads"} 1');
    const unknown = await fetch(`${base}/healthz`);
    expect(unknown.status).to.equal(404);

    // The database refuses connections: not ready, but alive; ready again once it is back.
    await allowConnections(database, false);
    const down = await poll(base, '/readyz', (status) => status === 503, () => output);
    expect(down.status).to.equal(503);
    expect(down.body.error).to.equal('the database cannot be reached');
    expect((await fetch(`${base}/livez`)).status).to.equal(200);
    await allowConnections(database, true);
    expect((await poll(base, '/readyz', (status) => status === 200, () => output)).status).to.equal(200);

    // Pretty: a line per message with its level, not JSON.
    expect(output).to.match(/INFO.*projection worker started/);
    expect(output.split('\n').filter((line) => line.startsWith('{'))).to.deep.equal([]);
  });
});

describe('operations: log format (unit)', () => {
  it('follows LOG_FORMAT, and otherwise writes JSON when the output is not a terminal', () => {
    // The test's stdout may be a terminal or not; a file descriptor that is not one: an unopened one.
    expect(logFormat(99, undefined)).to.equal('json');
    expect(logFormat(99, 'pretty')).to.equal('pretty');
    expect(logFormat(99, 'json')).to.equal('json');
    expect(logFormat(99, 'fancy')).to.equal('json');
  });
});
