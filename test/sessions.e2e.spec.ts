import { createHash } from 'node:crypto';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp } from '../src/http/app.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { capturedLog } from './support/log-lines.js';
import { queued, requestError } from './support/replies.js';
import { testCertificate, testCertificateKey } from './support/tls.js';

/** Dashboard sessions (docs/api.md, Sessions and Credentials): sign-in, cookie, who may do what with it. */

const admin = `Bearer ${adminToken}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;
const leadsPath = (account: Credentials): string => `/admin/v1/accounts/${account.licenseCode}/leads`;
const tokensPath = (account: Credentials): string => `/admin/v1/accounts/${account.licenseCode}/tokens`;

/** The session id of a sign-in reply's Set-Cookie, asserting every attribute of the cookie. */
function sessionCookieOf(reply: Reply): string {
  expect(reply.status, show(reply)).to.equal(200);
  const cookies = reply.headers.getSetCookie();
  expect(cookies).to.have.length(1);
  const [pair, ...attributes] = (cookies[0] as string).split(/;\s*/);
  const match = /^tracking_session=([A-Za-z0-9_-]{43})$/.exec(pair as string);
  expect(match, pair).to.not.equal(null);
  expect(attributes).to.include.members(['Max-Age=43200', 'Path=/', 'HttpOnly', 'SameSite=Strict']);
  // Served over plain HTTP here: Secure would keep the browser from sending it back.
  expect(attributes.map((a) => a.toLowerCase())).not.to.include('secure');
  const expires = attributes.find((a) => a.startsWith('Expires='))?.slice('Expires='.length);
  expect(Date.parse(expires as string) - Date.now()).to.be.closeTo(12 * 3600 * 1000, 60_000);
  return match?.[1] as string;
}

describe('sessions (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;

  beforeEach(async () => {
    app = await TestApp.start();
    account = await app.account('Acme');
    other = await app.account('Globex');
  });
  afterEach(() => app.stop());

  const signIn = (body: unknown, headers: Record<string, string> = {}) => app.request('POST', '/admin/v1/session', body, { headers });
  const withCookie = (id: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(method, path, body, { headers: { cookie: `theme=dark; tracking_session=${id}`, ...headers } });

  it('signs an account owner in: cookie attributes, only its hash stored, the session read back, its own leads readable, sign-out ends it', async () => {
    const reply = await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken });
    const id = sessionCookieOf(reply);
    expect(reply.body).to.deep.equal({ kind: 'account', account: { licenseCode: account.licenseCode, name: 'Acme' } });

    const { rows } = await app.pool.query<{ id_hash: Buffer }>('SELECT * FROM dashboard_sessions');
    expect(rows).to.have.length(1);
    expect(rows[0]?.id_hash.equals(createHash('sha256').update(id).digest())).to.equal(true);
    expect(JSON.stringify(rows)).not.to.contain(id);

    const current = await withCookie(id, 'GET', '/admin/v1/session');
    expect(current.status, show(current)).to.equal(200);
    expect(current.body).to.deep.equal(reply.body);
    expect((await withCookie(id, 'GET', leadsPath(account))).status).to.equal(200);
    expect((await withCookie(id, 'GET', tokensPath(account))).status).to.equal(200);

    const out = await withCookie(id, 'DELETE', '/admin/v1/session');
    expect(out.status).to.equal(204);
    const cleared = out.headers.getSetCookie()[0] ?? '';
    expect(cleared).to.match(/^tracking_session=;/).and.contain('Expires=Thu, 01 Jan 1970').and.contain('HttpOnly').and.contain('SameSite=Strict');
    requestError(await withCookie(id, 'GET', '/admin/v1/session'), 401);
    requestError(await withCookie(id, 'GET', leadsPath(account)), 401);
    expect((await app.pool.query('SELECT 1 FROM dashboard_sessions')).rowCount).to.equal(0);
  });

  it("refuses an account session another account's leads and tokens and every operator call (403), and never authenticates ingest", async () => {
    const id = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    expect(requestError(await withCookie(id, 'GET', leadsPath(other)), 403)).to.contain('another account');
    requestError(await withCookie(id, 'GET', tokensPath(other)), 403);
    requestError(await withCookie(id, 'GET', '/admin/v1/accounts'), 403);
    requestError(await withCookie(id, 'POST', '/admin/v1/accounts', { name: 'Mallory' }), 403);
    requestError(await withCookie(id, 'POST', `/v1/accounts/${account.licenseCode}/events`, { userId: 'u1', eventName: 'x' }), 401);
  });

  it('signs an operator in: the account list, any account, and no access once signed out', async () => {
    const reply = await signIn({ adminToken });
    const id = sessionCookieOf(reply);
    expect(reply.body).to.deep.equal({ kind: 'operator' });
    expect((await withCookie(id, 'GET', '/admin/v1/session')).body).to.deep.equal({ kind: 'operator' });
    const listed = await withCookie(id, 'GET', '/admin/v1/accounts');
    expect(listed.status, show(listed)).to.equal(200);
    expect((listed.body as { accounts: { name: string }[] }).accounts.map((a) => a.name)).to.deep.equal(['Acme', 'Globex']);
    expect((await withCookie(id, 'GET', leadsPath(other))).status).to.equal(200);
    expect((await withCookie(id, 'POST', '/admin/v1/accounts', { name: 'Initech' })).status).to.equal(201);
    requestError(await withCookie(id, 'GET', '/admin/v1/accounts/ffffffffffffffffffffffff/leads'), 404);

    expect((await withCookie(id, 'DELETE', '/admin/v1/session')).status).to.equal(204);
    requestError(await withCookie(id, 'GET', '/admin/v1/accounts'), 401);
  });

  it('answers wrong credentials 401, a token of scope ingest 403, and malformed sign-ins 400 naming the field', async () => {
    requestError(await signIn({ licenseCode: account.licenseCode, accessToken: other.accessToken }), 401);
    requestError(await signIn({ licenseCode: 'ffffffffffffffffffffffff', accessToken: account.accessToken }), 401);
    requestError(await signIn({ adminToken: 'not-the-admin-token' }), 401);
    requestError(await signIn({ adminToken: 'x'.repeat(600) }), 401);

    const created = await app.request('POST', tokensPath(account), { label: 'shop', scope: 'ingest' }, { authorization: admin });
    const ingestOnly = (created.body as { accessToken: string }).accessToken;
    expect(requestError(await signIn({ licenseCode: account.licenseCode, accessToken: ingestOnly }), 403)).to.contain('ingest+read');

    expect(requestError(await signIn({ licenseCode: account.licenseCode }), 400)).to.contain('accessToken');
    expect(requestError(await signIn({ accessToken: account.accessToken }), 400)).to.contain('licenseCode');
    expect(requestError(await signIn({ licenseCode: 5, accessToken: account.accessToken }), 400)).to.contain('licenseCode');
    expect(requestError(await signIn({ adminToken, licenseCode: account.licenseCode }), 400)).to.contain('either');
    requestError(await signIn(['x']), 400);
    requestError(await app.request('POST', '/admin/v1/session', undefined, { raw: JSON.stringify({ adminToken: 'x'.repeat(5000) }) }), 413);
    requestError(await app.request('POST', '/admin/v1/session', undefined, { raw: 'adminToken=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    requestError(await app.get('/admin/v1/session'), 401);
    expect((await app.pool.query('SELECT 1 FROM dashboard_sessions')).rowCount).to.equal(0);
  });

  it('refuses a cookie POST or DELETE from a foreign Origin (403), and takes one from its own origin', async () => {
    const id = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    const own = { origin: app.baseUrl };
    for (const origin of ['https://evil.example', 'null', `${app.baseUrl}.evil.example`]) {
      requestError(await withCookie(id, 'POST', tokensPath(account), { label: 'x', scope: 'ingest' }, { origin }), 403);
      requestError(await withCookie(id, 'DELETE', '/admin/v1/session', undefined, { origin }), 403);
      requestError(await signIn({ adminToken }, { origin }), 403);
    }
    expect((await app.pool.query('SELECT 1 FROM access_tokens')).rowCount).to.equal(2);
    // A GET is not refused: it changes nothing.
    expect((await withCookie(id, 'GET', tokensPath(account), undefined, { origin: 'https://evil.example' })).status).to.equal(200);
    const created = await withCookie(id, 'POST', tokensPath(account), { label: 'x', scope: 'ingest' }, own);
    expect(created.status, show(created)).to.equal(201);
    // Without an Origin header (not a browser's cross-site request) and with the admin token in a header: taken.
    expect((await withCookie(id, 'POST', tokensPath(account), { label: 'y', scope: 'ingest' })).status).to.equal(201);
    const byHeader = await app.request('POST', tokensPath(account), { label: 'z', scope: 'ingest' }, { authorization: admin, headers: { origin: 'https://elsewhere.example' } });
    expect(byHeader.status, show(byHeader)).to.equal(201);
    expect((await withCookie(id, 'DELETE', '/admin/v1/session', undefined, own)).status).to.equal(204);
  });

  it('ends operator sessions when ADMIN_TOKEN changes', async () => {
    const id = sessionCookieOf(await signIn({ adminToken }));
    const changed = await TestApp.start({ adminToken: 'a-new-admin-token' }, { database: app.database });
    try {
      requestError(await changed.request('GET', '/admin/v1/session', undefined, { headers: { cookie: `tracking_session=${id}` } }), 401);
      requestError(await changed.request('GET', '/admin/v1/accounts', undefined, { headers: { cookie: `tracking_session=${id}` } }), 401);
      const unset = await TestApp.start({ adminToken: undefined }, { database: app.database });
      try {
        requestError(await unset.request('GET', '/admin/v1/accounts', undefined, { headers: { cookie: `tracking_session=${id}` } }), 401);
      } finally {
        await unset.stop();
      }
    } finally {
      await changed.stop();
    }
    // The process with the token it signed in with still takes it.
    expect((await withCookie(id, 'GET', '/admin/v1/accounts')).status).to.equal(200);
  });

  it('keeps operator sessions ended when ADMIN_TOKEN is changed and then changed back', async () => {
    const first = sessionCookieOf(await signIn({ adminToken }));
    const cookieOf = (id: string) => ({ headers: { cookie: `tracking_session=${id}` } });
    const changed = await TestApp.start({ adminToken: 'a-new-admin-token' }, { database: app.database });
    try {
      requestError(await changed.request('GET', '/admin/v1/session', undefined, cookieOf(first)), 401);
    } finally {
      await changed.stop();
    }
    const back = await TestApp.start({ adminToken }, { database: app.database });
    try {
      // The first token again: the session made under it before the change stays dead.
      requestError(await back.request('GET', '/admin/v1/session', undefined, cookieOf(first)), 401);
      requestError(await back.request('GET', '/admin/v1/accounts', undefined, cookieOf(first)), 401);
      // A sign-in now makes a session that works.
      const again = sessionCookieOf(await back.request('POST', '/admin/v1/session', { adminToken }));
      expect((await back.request('GET', '/admin/v1/accounts', undefined, cookieOf(again))).status).to.equal(200);
    } finally {
      await back.stop();
    }
  });

  it('gives processes that start at once with one ADMIN_TOKEN one generation: a session of one works in the others', async () => {
    const token = 'a-token-for-three-processes';
    const processes = await Promise.all([1, 2, 3].map(() => TestApp.start({ adminToken: token }, { database: app.database })));
    try {
      const cookie = { headers: { cookie: `tracking_session=${sessionCookieOf(await processes[0]!.request('POST', '/admin/v1/session', { adminToken: token }))}` } };
      for (const process of processes) expect((await process.request('GET', '/admin/v1/accounts', undefined, cookie)).status).to.equal(200);
      const { rows } = await app.pool.query<{ generation: string }>('SELECT generation FROM admin_token_generation');
      // The first process of this test's database, then the change to the new token: two generations, not four.
      expect(rows.map((r) => Number(r.generation))).to.deep.equal([2]);
    } finally {
      await Promise.all(processes.map((p) => p.stop()));
    }
  });

  it('ends the sessions of a revoked token at once, in every process, and keeps the others', async () => {
    const second = await app.request('POST', tokensPath(account), { label: 'laptop', scope: 'ingest+read' }, { authorization: admin });
    const { id: tokenId, accessToken } = second.body as { id: string; accessToken: string };
    const revokedSession = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken }));
    const keptSession = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    const otherProcess = await TestApp.start({}, { database: app.database });
    try {
      expect((await otherProcess.request('GET', leadsPath(account), undefined, { headers: { cookie: `tracking_session=${revokedSession}` } })).status).to.equal(200);
      expect((await withCookie(keptSession, 'DELETE', `${tokensPath(account)}/${tokenId}`)).status).to.equal(204);
      requestError(await withCookie(revokedSession, 'GET', '/admin/v1/session'), 401);
      requestError(await otherProcess.request('GET', leadsPath(account), undefined, { headers: { cookie: `tracking_session=${revokedSession}` } }), 401);
      expect((await withCookie(keptSession, 'GET', leadsPath(account))).status).to.equal(200);
    } finally {
      await otherProcess.stop();
    }
  });

  it('refuses a session whose token was revoked even if its row was not removed', async () => {
    const id = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    await app.pool.query('UPDATE access_tokens SET revoked_at = now()');
    requestError(await withCookie(id, 'GET', '/admin/v1/session'), 401);
  });

  it('expires sessions after 12 hours and deletes expired ones at the next sign-in', async () => {
    const id = sessionCookieOf(await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    const { rows } = await app.pool.query<{ hours: number }>("SELECT extract(epoch FROM expires_at - created_at) / 3600 AS hours FROM dashboard_sessions");
    expect(Number(rows[0]?.hours)).to.equal(12);
    await app.pool.query("UPDATE dashboard_sessions SET expires_at = now() - interval '1 second'");
    requestError(await withCookie(id, 'GET', '/admin/v1/session'), 401);
    sessionCookieOf(await signIn({ adminToken }));
    const { rows: left } = await app.pool.query<{ kind: string }>('SELECT kind FROM dashboard_sessions');
    expect(left.map((r) => r.kind)).to.deep.equal(['operator']);
  });

  it('answers a made-up or malformed cookie 401 and ignores other cookies', async () => {
    requestError(await withCookie('A'.repeat(43), 'GET', '/admin/v1/session'), 401);
    requestError(await withCookie('short', 'GET', leadsPath(account)), 401);
    requestError(await app.request('GET', '/admin/v1/accounts', undefined, { headers: { cookie: 'tracking_session_x=1; other=2' } }), 401);
  });
});

describe('sessions: logs (e2e)', () => {
  it('never logs a session id or a token', async () => {
    const captured = capturedLog('debug');
    const app = await TestApp.start({}, { log: captured.log });
    try {
      const account = await app.account();
      const signedIn = await app.request('POST', '/admin/v1/session', { licenseCode: account.licenseCode, accessToken: account.accessToken });
      const id = sessionCookieOf(signedIn);
      const created = await app.request('POST', tokensPath(account), { label: 'ci', scope: 'ingest' }, { headers: { cookie: `tracking_session=${id}` } });
      const { accessToken } = created.body as { accessToken: string };
      queued(await app.ingest({ ...account, accessToken }, 'events', { userId: 'u1', eventName: 'Viewed' }));
      await app.request('POST', '/admin/v1/session', { adminToken });
      expect(captured.lines.some((line) => line.msg === 'signed in')).to.equal(true);
      const text = captured.written();
      for (const secret of [id, accessToken, account.accessToken, adminToken]) expect(text).not.to.contain(secret);
    } finally {
      await app.stop();
    }
  });
});

describe('sessions over HTTPS (e2e)', () => {
  it('marks the session cookie Secure when the request came over HTTPS', async () => {
    const app = await TestApp.start();
    const server = createHttpsServer({ key: testCertificateKey, cert: testCertificate }, createApp(app.services));
    try {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ adminToken });
      const setCookie = await new Promise<string[]>((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port, path: '/admin/v1/session', method: 'POST', ca: testCertificate, headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 200 ? resolve(res.headers['set-cookie'] ?? []) : reject(new Error(`HTTP ${res.statusCode}`))));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(setCookie).to.have.length(1);
      expect((setCookie[0] as string).split(/;\s*/)).to.include.members(['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await app.stop();
    }
  });
});
