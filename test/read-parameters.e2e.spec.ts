import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/http/app.js';
import { errorHandler } from '../src/http/errors.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { expressRoutes } from './support/express-routes.js';
import { capturedLog, levels, type LogLine } from './support/log-lines.js';
import { requestError } from './support/replies.js';

/** Values PostgreSQL refuses in text: a NUL character, and an encoded lone surrogate (`ED A0 80`, not UTF-8). */
const nul = 'a%00b';
const encodedSurrogate = 'a%ED%A0%80b';
/** The query parameters of the read API (docs/api.md). */
const queryNames = ['q', 'cursor', 'kind', 'limit', 'after', 'attribute', 'value'];
const admin = { authorization: `Bearer ${adminToken}` };

const errorLines = (lines: LogLine[]): LogLine[] => lines.filter((line) => line.level >= levels.error);

describe('read and operator parameters PostgreSQL cannot take (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let lines: LogLine[];

  beforeEach(async () => {
    const captured = capturedLog('info');
    lines = captured.lines;
    app = await TestApp.start({}, { log: captured.log });
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  /** Every route under /admin/v1 with each of its methods, the license code filled in. */
  const adminRoutes = () =>
    expressRoutes(createApp(app.services))
      .filter((route) => route.path.startsWith('/admin/v1/'))
      .map((route) => ({ ...route, path: route.path.replace(':license', account.licenseCode) }));

  const send = (method: string, path: string, body?: unknown): Promise<Reply> => app.request(method.toUpperCase(), path, body, admin);

  it('answers a NUL character in any path parameter of any route with 400 form A naming the parameter, and logs no error', async () => {
    const routes = adminRoutes().filter((route) => /:\w+/.test(route.path));
    expect(routes.map((r) => r.path)).to.include.members([
      `/admin/v1/accounts/${account.licenseCode}/leads/:id`,
      `/admin/v1/accounts/${account.licenseCode}/leads/:id/events`,
      `/admin/v1/accounts/${account.licenseCode}/leads/:id/timeline`,
      `/admin/v1/accounts/${account.licenseCode}/track/:trackID`,
    ]);
    for (const route of routes) {
      const name = /:(\w+)/.exec(route.path)?.[1] as string;
      const reply = await send(route.method, route.path.replace(`:${name}`, nul));
      expect(requestError(reply, 400), `${route.method} ${route.path}`).to.equal(
        `path parameter ${name} contains a NUL character or an unpaired surrogate, which the service cannot take`,
      );
      // A segment that is not UTF-8 is refused before any parameter is known.
      const undecodable = await send(route.method, route.path.replace(`:${name}`, encodedSurrogate));
      expect(requestError(undecodable, 400), `${route.method} ${route.path}`).to.equal('the path is not valid percent-encoded UTF-8');
    }
    expect(errorLines(lines)).to.deep.equal([]);
  });

  it('answers a NUL character in the license code of the path with 400 form A naming it, on read and ingest routes alike, before PostgreSQL sees it', async () => {
    const requests: [string, string, unknown][] = [
      ['GET', `/admin/v1/accounts/${nul}/leads`, undefined],
      ['GET', `/admin/v1/accounts/${nul}/track/0190a0a0-0000-7000-8000-000000000000`, undefined],
      ['POST', `/v1/accounts/${nul}/events`, { userId: 'u-1', eventName: 'visit' }],
    ];
    for (const [method, path, body] of requests) {
      const reply = await app.request(method, path, body, { authorization: `Bearer ${account.accessToken}` });
      expect(requestError(reply, 400), `${method} ${path}`).to.equal('path parameter license contains a NUL character or an unpaired surrogate, which the service cannot take');
    }
    // Not even a warning: PostgreSQL never got the value.
    expect(lines.filter((line) => line.level >= levels.warn)).to.deep.equal([]);
  });

  it('answers a NUL character or an encoded surrogate in any query parameter of any route with 400 form A naming it, and logs no error', async () => {
    for (const route of adminRoutes()) {
      const path = route.path.replace(/:\w+/g, 'x1');
      for (const name of queryNames) {
        const withNul = await send(route.method, `${path}?${name}=${nul}`);
        expect(requestError(withNul, 400), `${route.method} ${path}?${name}`).to.equal(
          `query parameter ${name} contains a NUL character or an unpaired surrogate, which the service cannot take`,
        );
        const withSurrogate = await send(route.method, `${path}?${name}=${encodedSurrogate}`);
        expect(requestError(withSurrogate, 400), `${route.method} ${path}?${name}`).to.equal(`query parameter ${name} is not percent-encoded UTF-8`);
      }
    }
    // The tester's cases, as a user sends them.
    const leads = `/admin/v1/accounts/${account.licenseCode}/leads`;
    expect(requestError(await send('GET', `${leads}?q=%00`), 400)).to.contain('query parameter q ');
    expect(requestError(await send('GET', `${leads}?q=x&q=%00`), 400)).to.contain('query parameter q ');
    // What a search may hold still works.
    expect((await send('GET', `${leads}?q=${encodeURIComponent('Zoë 🙂 +%')}`)).status).to.equal(200);
    expect(errorLines(lines)).to.deep.equal([]);
  });

  it('answers a NUL character or a lone surrogate in any field of an operator or session body with 400 form A naming the field, storing nothing', async () => {
    const tokens = `/admin/v1/accounts/${account.licenseCode}/tokens`;
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/admin/v1/accounts', { name: 'a\u0000b' }, 'name'],
      ['POST', '/admin/v1/accounts', { name: 'a\ud800b' }, 'name'],
      ['POST', '/admin/v1/accounts', { name: 'Acme', ['x\u0000']: 1 }, 'x\u0000'],
      ['POST', tokens, { label: 'a\u0000b', scope: 'ingest' }, 'label'],
      ['POST', tokens, { label: 'a\udc00', scope: 'ingest' }, 'label'],
      ['POST', tokens, { label: 'shop', scope: 'ingest\u0000' }, 'scope'],
      ['POST', '/admin/v1/session', { licenseCode: `${account.licenseCode}\u0000`, accessToken: account.accessToken }, 'licenseCode'],
      ['POST', '/admin/v1/session', { licenseCode: account.licenseCode, accessToken: '\ud800' }, 'accessToken'],
      ['POST', '/admin/v1/session', { adminToken: 'a\u0000b' }, 'adminToken'],
    ];
    for (const [method, path, body, field] of cases) {
      const reply = await send(method, path, body);
      expect(requestError(reply, 400), JSON.stringify(body)).to.equal(`${field} contains a NUL character or an unpaired surrogate, which cannot be stored`);
    }
    const { rows } = await app.pool.query<{ accounts: number; tokens: number }>(
      'SELECT (SELECT count(*)::int FROM accounts) AS accounts, (SELECT count(*)::int FROM access_tokens) AS tokens',
    );
    expect(rows[0]).to.deep.equal({ accounts: 1, tokens: 1 });
    expect(errorLines(lines)).to.deep.equal([]);
  });
});

describe('a value PostgreSQL refuses as data (e2e)', () => {
  let server: Server;
  let app: TestApp;
  let lines: LogLine[];
  before(async () => {
    app = await TestApp.start();
  });
  after(() => app.stop());
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is answered 400 form A with its SQLSTATE, never 500, and logged as a warning only', async () => {
    // A route whose value reaches PostgreSQL unchecked, answered by the service's error mapping.
    const captured = capturedLog('info');
    lines = captured.lines;
    const probe = express();
    probe.use((req, _res, next) => {
      req.log = captured.log;
      next();
    });
    probe.get('/echo/:text', async (req, res) => {
      const { rows } = await app.pool.query<{ text: string }>('SELECT $1::text AS text', [req.params.text]);
      res.json(rows[0]);
    });
    probe.get('/small/:n', async (req, res) => {
      const { rows } = await app.pool.query<{ n: number }>('SELECT $1::int AS n', [req.params.n]);
      res.json(rows[0]);
    });
    probe.use(errorHandler(captured.log));
    server = await new Promise<Server>((resolve) => {
      const s = probe.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string) => {
      const response = await fetch(base + path);
      return { status: response.status, body: (await response.json()) as unknown, headers: response.headers };
    };
    expect(requestError(await get('/echo/a%00b'), 400)).to.equal('a value of the request cannot be taken by the database (SQLSTATE 22021)');
    expect(requestError(await get('/small/99999999999'), 400)).to.equal('a value of the request cannot be taken by the database (SQLSTATE 22003)');
    expect((await get('/echo/ok')).body).to.deep.equal({ text: 'ok' });
    expect(errorLines(lines)).to.deep.equal([]);
    expect(lines.filter((line) => line.level === levels.warn).map((line) => [line.msg, line.sqlstate])).to.deep.equal([
      ['the database refused a value of the request', '22021'],
      ['the database refused a value of the request', '22003'],
    ]);
    // PostgreSQL's message can quote the value: it is not logged.
    expect(JSON.stringify(lines)).not.to.contain('99999999999');
  });
});
