import { expect } from 'chai';
import { failedSignInsAllowed } from '../src/http/sign-in-limit.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { requestError } from './support/replies.js';

describe('wrong admin tokens (sign-in and Authorization header), and a TLS proxy in front (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  afterEach(() => app.stop());

  const signIn = (body: unknown, headers: Record<string, string> = {}) => app.request('POST', '/admin/v1/session', body, { headers });
  const tooMany = (reply: Reply) => {
    expect(requestError(reply, 429)).to.match(/^too many wrong admin tokens from this address; retry after \d+ s$/);
    expect(Number(reply.headers.get('retry-after'))).to.be.within(1, 600);
  };
  const refused = async (body: unknown, headers: Record<string, string> = {}) => tooMany(await signIn(body, headers));
  const get = (path: string, authorization: string, headers: Record<string, string> = {}) => app.request('GET', path, undefined, { authorization, headers });

  describe('without TRUST_PROXY', () => {
    beforeEach(async () => {
      app = await TestApp.start();
      account = await app.account('Acme');
    });

    it('refuses operator sign-in from an address after 20 failures, even with the right token; account owners still sign in', async () => {
      expect(failedSignInsAllowed).to.equal(20);
      // Successes and failed account sign-ins cost nothing.
      for (let i = 0; i < 3; i += 1) expect((await signIn({ adminToken })).status).to.equal(200);
      for (let i = 0; i < 30; i += 1) requestError(await signIn({ licenseCode: account.licenseCode, accessToken: `trk_guess-${i}` }), 401);
      for (let i = 0; i < failedSignInsAllowed - 1; i += 1) requestError(await signIn({ adminToken: `${adminToken}-guess-${i}` }), 401);
      expect((await signIn({ adminToken })).status).to.equal(200);
      requestError(await signIn({ adminToken: 'one-more-guess' }), 401);
      await refused({ adminToken });
      // A forwarded address is not believed: it is the same client.
      await refused({ adminToken }, { 'x-forwarded-for': '203.0.113.9' });
      expect((await signIn({ licenseCode: account.licenseCode, accessToken: account.accessToken })).status).to.equal(200);
      // The Authorization header shares the count: the right token from this address is refused there too.
      tooMany(await get('/admin/v1/accounts', `Bearer ${adminToken}`));
      // Access tokens are not counted, and still work from this address.
      expect((await get(`/admin/v1/accounts/${account.licenseCode}/leads`, `Bearer ${account.accessToken}`)).status).to.equal(200);
    });

    it('ignores X-Forwarded-Proto: the session cookie is not marked Secure over plain HTTP', async () => {
      const reply = await signIn({ adminToken }, { 'x-forwarded-proto': 'https' });
      expect(reply.status).to.equal(200);
      expect(reply.headers.get('set-cookie')).not.to.match(/;\s*Secure/i);
    });
  });

  describe('with TRUST_PROXY=loopback', () => {
    beforeEach(async () => {
      app = await TestApp.start({ trustProxy: 'loopback' });
    });

    it('marks the session cookie Secure when the proxy says the client came over HTTPS', async () => {
      const reply = await signIn({ adminToken }, { 'x-forwarded-proto': 'https' });
      expect(reply.status).to.equal(200);
      expect(reply.headers.get('set-cookie')).to.match(/;\s*Secure/i);
      expect((await signIn({ adminToken })).headers.get('set-cookie')).not.to.match(/;\s*Secure/i);
    });

    it('counts failed operator sign-ins per client address the proxy names', async () => {
      const from = (address: string) => ({ 'x-forwarded-for': address });
      for (let i = 0; i < failedSignInsAllowed; i += 1) requestError(await signIn({ adminToken: `guess-${i}` }, from('203.0.113.9')), 401);
      await refused({ adminToken }, from('203.0.113.9'));
      expect((await signIn({ adminToken }, from('198.51.100.7'))).status).to.equal(200);
    });

    it('counts wrong admin tokens in the Authorization header of every route that takes it, with failed sign-ins, per address; access tokens are not counted', async () => {
      account = await app.account('Acme');
      const from = (address: string) => ({ 'x-forwarded-for': address });
      const operatorPaths = [
        '/admin/v1/accounts',
        '/admin/v1/projections',
        `/admin/v1/accounts/${account.licenseCode}/leads`,
        `/admin/v1/accounts/${account.licenseCode}/tokens`,
        `/admin/v1/accounts/${account.licenseCode}/overview`,
      ];
      const attacker = from('203.0.113.9');
      // Guesses spread over the routes and the sign-in form are evaluated (401) up to the limit.
      for (let i = 0; i < failedSignInsAllowed - 1; i += 1) {
        requestError(await get(operatorPaths[i % operatorPaths.length] as string, `Bearer guess-${i}`, attacker), 401);
      }
      requestError(await signIn({ adminToken: 'last-guess' }, attacker), 401);
      // Then every route refuses the address, the right token too, without comparing it.
      for (const path of operatorPaths) {
        tooMany(await get(path, `Bearer ${adminToken}`, attacker));
        tooMany(await get(path, 'one-more-guess', attacker));
      }
      await refused({ adminToken }, attacker);
      // Another address still gets in with the right token.
      for (const path of operatorPaths) expect((await get(path, `Bearer ${adminToken}`, from('198.51.100.7'))).status, path).to.equal(200);
      // The account's own access token still reads from the refused address: it is no guess of the admin token.
      expect((await get(operatorPaths[2] as string, `Bearer ${account.accessToken}`, attacker)).status).to.equal(200);
      // Wrong access tokens are not counted: an address that sent many keeps its admin access.
      const owner = from('192.0.2.44');
      for (let i = 0; i < 2 * failedSignInsAllowed; i += 1) {
        requestError(await get(operatorPaths[2] as string, `Bearer trk_${String(i).padStart(43, 'x')}`, owner), 401);
      }
      expect((await get('/admin/v1/accounts', `Bearer ${adminToken}`, owner)).status).to.equal(200);
    });
  });
});
