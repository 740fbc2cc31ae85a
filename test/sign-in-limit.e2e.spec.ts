import { expect } from 'chai';
import { failedSignInsAllowed } from '../src/http/sign-in-limit.js';
import { adminToken, TestApp, type Credentials } from './support/app.js';
import { requestError } from './support/replies.js';

describe('failed operator sign-ins, and a TLS proxy in front (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  afterEach(() => app.stop());

  const signIn = (body: unknown, headers: Record<string, string> = {}) => app.request('POST', '/admin/v1/session', body, { headers });
  const refused = async (body: unknown, headers: Record<string, string> = {}) => {
    const reply = await signIn(body, headers);
    requestError(reply, 429);
    expect((reply.body as { error: string }).error).to.match(/^too many failed operator sign-ins from this address; retry after \d+ s$/);
    expect(Number(reply.headers.get('retry-after'))).to.be.within(1, 600);
  };

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
      // The API's Authorization header is not affected.
      expect((await app.get('/admin/v1/accounts', `Bearer ${adminToken}`)).status).to.equal(200);
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
  });
});
