import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { listTokens } from '../src/accounts/tokens.js';
import { createAccount, findAccount, listAccounts } from '../src/accounts/accounts.js';
import { sessionCookie } from '../src/http/auth.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';

/**
 * Who may call what (src/http/auth.ts): ingest, operator and account-scoped calls with tokens,
 * sessions and foreign origins, through the app's routes on a real database.
 */
describe('authentication of ingest, operator and account calls (int)', () => {
  let app: TestApp;
  let acme: Credentials & { id: string };
  let other: Credentials;
  before(async () => {
    app = await TestApp.start();
    const created = await createAccount(app.pool, 'acme');
    acme = { id: created.id, licenseCode: created.licenseCode, accessToken: created.accessToken };
    other = await app.account('other');
  });
  after(() => app.stop());

  const ingest = (license: string, authorization?: string, headers: Record<string, string> = {}) =>
    app.request('POST', `/v1/accounts/${license}/events`, { userId: 'u-1', eventName: 'Viewed' }, { ...(authorization === undefined ? {} : { authorization }), headers });
  const operatorCall = (authorization?: string, headers: Record<string, string> = {}) =>
    app.request('GET', '/admin/v1/accounts', undefined, { ...(authorization === undefined ? {} : { authorization }), headers });
  const tokensOf = (license: string, authorization?: string, headers: Record<string, string> = {}) =>
    app.request('GET', `/admin/v1/accounts/${license}/tokens`, undefined, { ...(authorization === undefined ? {} : { authorization }), headers });
  const cookie = (id: string) => ({ cookie: `${sessionCookie}=${id}` });
  const statusOf = async (reply: Promise<Reply>) => (await reply).status;
  const accountSession = async (account: { id: string; licenseCode: string }) => {
    const [token] = await listTokens(app.pool, account.id);
    const found = await findAccount(app.pool, account.licenseCode);
    if (!token || !found) throw new Error('no account or token');
    return app.services.sessions.startAccountSession(found, token.id);
  };

  it('ingest: the token bare or after Bearer in any case and blanks; missing, empty, wrong, another account\'s or a cookie: 401', async () => {
    for (const authorization of [acme.accessToken, `Bearer ${acme.accessToken}`, `bearer ${acme.accessToken}`, `  BEARER   ${acme.accessToken}  `]) {
      expect(await statusOf(ingest(acme.licenseCode, authorization)), authorization).to.equal(200);
    }
    const refused: Array<[string, string | undefined]> = [
      ['no header', undefined],
      ['empty', ''],
      ['Bearer and nothing', 'Bearer '],
      ['the scheme word alone', 'Bearer'],
      ['a word before the scheme', `xBearer ${acme.accessToken}`],
      ['wrong token', `Bearer ${acme.accessToken}x`],
      ["another account's token", `Bearer ${other.accessToken}`],
      ['the admin token', `Bearer ${adminToken}`],
    ];
    for (const [what, authorization] of refused) {
      const reply = await ingest(acme.licenseCode, authorization);
      expect(reply.status, what).to.equal(401);
      expect(reply.body, what).to.deep.equal({
        error: authorization?.trim() ? 'invalid access token or license code' : 'missing access token',
        code: 401,
      });
    }
    expect(await statusOf(ingest('0'.repeat(24), `Bearer ${acme.accessToken}`)), 'unknown license').to.equal(401);
    const session = await accountSession(acme);
    expect(await statusOf(ingest(acme.licenseCode, undefined, cookie(session))), 'cookie').to.equal(401);
  });

  it('operator calls: the admin token; an active access token 403, a revoked or unknown one 401; sessions by kind', async () => {
    expect(await statusOf(operatorCall(adminToken))).to.equal(200);
    expect(await statusOf(operatorCall(`Bearer ${adminToken}`))).to.equal(200);
    const active = await operatorCall(`Bearer ${acme.accessToken}`);
    expect(active.body).to.deep.equal({ error: 'an access token cannot make operator calls: they take the admin token', code: 403 });
    const extra = await app.services.accounts.addToken(acme.licenseCode, 'to revoke', 'ingest');
    if (!extra) throw new Error('no token made');
    expect(await app.services.accounts.revokeToken(acme.licenseCode, extra.id)).to.equal('revoked');
    for (const token of [extra.accessToken, 'trk_unknown', `${adminToken}x`, adminToken.slice(0, -1)]) {
      const reply = await operatorCall(`Bearer ${token}`);
      expect(reply.body, token).to.deep.equal({ error: 'admin token required', code: 401 });
    }
    expect((await operatorCall()).body).to.deep.equal({ error: 'admin token or operator session required', code: 401 });
    const operator = await app.services.sessions.startOperatorSession();
    expect(await statusOf(operatorCall(undefined, cookie(operator)))).to.equal(200);
    // The header alone judges a request that has one, whatever cookie it carries.
    expect(await statusOf(operatorCall('Bearer wrong', cookie(operator)))).to.equal(401);
    const account = await operatorCall(undefined, cookie(await accountSession(acme)));
    expect(account.body).to.deep.equal({ error: 'an account session cannot make operator calls: sign in with the admin token', code: 403 });
    expect(await statusOf(operatorCall(undefined, cookie('not-a-session')))).to.equal(401);
  });

  it('operator calls without ADMIN_TOKEN configured: every token 401', async () => {
    const bare = await TestApp.start({ adminToken: undefined });
    try {
      for (const authorization of [adminToken, '', 'Bearer x']) {
        expect((await bare.request('GET', '/admin/v1/accounts', undefined, { authorization })).status, authorization).to.equal(401);
      }
    } finally {
      await bare.stop();
    }
  });

  it("account calls: the admin token or an operator session (404 for an unknown license), the account's ingest+read token or session; each refusal's message", async () => {
    const unknown = 'f'.repeat(24);
    const operator = await app.services.sessions.startOperatorSession();
    const own = await accountSession(acme);
    const ingestOnly = await app.services.accounts.addToken(acme.licenseCode, 'web', 'ingest');
    if (!ingestOnly) throw new Error('no token made');
    const cases: Array<[string, Promise<Reply>, number]> = [
      ['admin token', tokensOf(acme.licenseCode, `Bearer ${adminToken}`), 200],
      ['admin token, unknown license', tokensOf(unknown, `Bearer ${adminToken}`), 404],
      ['operator session', tokensOf(acme.licenseCode, undefined, cookie(operator)), 200],
      ['operator session, unknown license', tokensOf(unknown, undefined, cookie(operator)), 404],
      ['own ingest+read token', tokensOf(acme.licenseCode, acme.accessToken), 200],
      ['own ingest token', tokensOf(acme.licenseCode, `Bearer ${ingestOnly.accessToken}`), 403],
      ["another account's token", tokensOf(acme.licenseCode, `Bearer ${other.accessToken}`), 401],
      ['own session', tokensOf(acme.licenseCode, undefined, cookie(own)), 200],
      ["another account's session", tokensOf(other.licenseCode, undefined, cookie(own)), 403],
      ['nothing', tokensOf(acme.licenseCode), 401],
      ['an unknown session', tokensOf(acme.licenseCode, undefined, cookie('x'.repeat(43))), 401],
    ];
    for (const [what, reply, status] of cases) expect((await reply).status, what).to.equal(status);
    const admin = (await tokensOf(acme.licenseCode, `Bearer ${adminToken}`)).body as { tokens: Array<{ label: string }> };
    expect(admin.tokens.map((t) => t.label)).to.include('web');
    expect((await tokensOf(acme.licenseCode, `Bearer ${ingestOnly.accessToken}`)).body).to.have.property('error').that.contains('scope ingest');
    expect((await tokensOf(other.licenseCode, undefined, cookie(own))).body).to.deep.equal({ error: 'this session belongs to another account', code: 403 });
    expect((await tokensOf(unknown, `Bearer ${adminToken}`)).body).to.deep.equal({ error: 'unknown license code', code: 404 });
    expect((await tokensOf(acme.licenseCode, `Bearer ${other.accessToken}`)).body).to.deep.equal({ error: 'invalid access token or license code', code: 401 });
    expect((await tokensOf(acme.licenseCode)).body).to.deep.equal({ error: 'missing access token or session', code: 401 });
  });

  it('a change made with a cookie needs an Origin of this host, any port (or none), else 403 saying so; with a token, or a GET, the Origin does not matter', async () => {
    const own = await accountSession(acme);
    const addWith = (headers: Record<string, string>, authorization?: string) =>
      app.request('POST', `/admin/v1/accounts/${acme.licenseCode}/tokens`, { label: 'shop', scope: 'ingest' }, { headers, ...(authorization ? { authorization } : {}) });
    const host = new URL(app.baseUrl).host;
    expect((await addWith({ ...cookie(own), origin: 'https://evil.example' })).body).to.deep.equal({
      error: "a request that changes something with a session must come from this service's own origin (Origin names another host)",
      code: 403,
    });
    expect((await addWith({ ...cookie('x'.repeat(43)), origin: 'https://evil.example' })).status, 'no live session: not signed in').to.equal(401);
    expect((await addWith({ ...cookie(own), origin: 'null' })).status, 'an Origin that is no URL').to.equal(403);
    expect((await addWith({ ...cookie(own), origin: `http://${host.replace('127.0.0.1', '127.0.0.2')}` })).status).to.equal(403);
    expect((await addWith({ ...cookie(own), origin: `http://${host}` })).status).to.equal(201);
    expect((await addWith({ ...cookie(own), origin: `https://${host.toUpperCase()}/some/page` })).status, 'scheme and path are not compared').to.equal(201);
    expect((await addWith(cookie(own))).status, 'no Origin').to.equal(201);
    expect((await addWith({ origin: 'https://evil.example' }, `Bearer ${acme.accessToken}`)).status, 'token').to.equal(201);
    expect((await tokensOf(acme.licenseCode, undefined, { ...cookie(own), origin: 'https://evil.example' })).status, 'GET').to.equal(200);
    const head = await app.request('HEAD', `/admin/v1/accounts/${acme.licenseCode}/tokens`, undefined, { headers: { ...cookie(own), origin: 'https://evil.example' } });
    expect(head.status, 'HEAD').to.equal(200);
    // A default port is left out of Origin by browsers and may be written in Host.
    for (const [hostHeader, origin, status] of [
      ['service.example:443', 'https://service.example', 201],
      ['service.example:80', 'http://service.example', 201],
      ['service.example:8443', 'https://service.example', 403],
      ['service.example:8080', 'http://service.example:8080', 201],
      ['service.example:4430', 'https://service.example:4430', 201],
    ] as const) {
      expect(await postWithHost(hostHeader, origin, own), `${hostHeader} ${origin}`).to.equal(status);
    }
  });

  it('the session cookie among others, quoted, empty or under another name', async () => {
    const own = await accountSession(acme);
    const withCookie = async (value: string) => (await tokensOf(acme.licenseCode, undefined, { cookie: value })).status;
    expect(await withCookie(`theme=dark; ${sessionCookie}=${own}; lang=en`)).to.equal(200);
    expect(await withCookie(`${sessionCookie}="${own}"`)).to.equal(200);
    expect(await withCookie(`flag; ${sessionCookie}=${own}`)).to.equal(200);
    expect(await withCookie(`${sessionCookie}=`)).to.equal(401);
    expect(await withCookie(`x${sessionCookie}=${own}`)).to.equal(401);
    expect(await withCookie(`${sessionCookie}x=${own}`)).to.equal(401);
  });

  it('accounts: a new account is listed and found by its license code, with one ingest+read token labelled initial', async () => {
    const created = await createAccount(app.pool, 'Zed');
    expect(created.licenseCode).to.match(/^[0-9a-f]{24}$/);
    expect(created.accessToken).to.match(/^trk_[A-Za-z0-9_-]{43}$/);
    expect(await findAccount(app.pool, created.licenseCode)).to.deep.equal({ id: created.id, name: 'Zed', licenseCode: created.licenseCode });
    expect(await findAccount(app.pool, 'a'.repeat(24))).to.equal(null);
    const listed = (await listAccounts(app.pool)).find((a) => a.id === created.id);
    expect(listed).to.include({ name: 'Zed', licenseCode: created.licenseCode });
    expect(Date.parse(listed?.createdAt ?? '')).to.be.closeTo(Date.now(), 60_000);
    expect((await listTokens(app.pool, created.id)).map((t) => [t.label, t.scope])).to.deep.equal([['initial', 'ingest+read']]);
    expect((await app.services.accounts.authenticate(created.licenseCode, created.accessToken))?.account.id).to.equal(created.id);
  });

  /** A token POST with a session cookie and a Host header of our choosing (fetch keeps Host to itself). */
  function postWithHost(host: string, origin: string, sessionId: string): Promise<number> {
    const url = new URL(`${app.baseUrl}/admin/v1/accounts/${acme.licenseCode}/tokens`);
    const body = JSON.stringify({ label: 'host', scope: 'ingest' });
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { host, origin, cookie: `${sessionCookie}=${sessionId}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  }
});
