import { expect } from 'chai';
import { failedSignInsAllowed } from '../src/http/sign-in-limit.js';
import { adminToken, TestApp, type Credentials } from './support/app.js';
import { requestError } from './support/replies.js';

describe('failed sign-ins (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    app = await TestApp.start();
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  const signIn = (body: unknown) => app.request('POST', '/admin/v1/session', body);

  it('refuses an address with 429 and Retry-After once it has failed 20 times, even with the right credentials', async () => {
    expect(failedSignInsAllowed).to.equal(20);
    // Successes cost nothing.
    for (let i = 0; i < 3; i += 1) expect((await signIn({ adminToken })).status).to.equal(200);
    for (let i = 0; i < failedSignInsAllowed / 2; i += 1) {
      requestError(await signIn({ adminToken: `${adminToken}-guess-${i}` }), 401);
      requestError(await signIn({ licenseCode: account.licenseCode, accessToken: `trk_guess-${i}` }), 401);
    }
    for (const body of [{ adminToken }, { licenseCode: account.licenseCode, accessToken: account.accessToken }]) {
      const refused = await signIn(body);
      requestError(refused, 429);
      expect((refused.body as { error: string }).error).to.match(/^too many failed sign-ins from this address; retry after \d+ s$/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 600);
    }
    // The API's own credentials are not affected.
    expect((await app.get(`/admin/v1/accounts/${account.licenseCode}/leads`, `Bearer ${account.accessToken}`)).status).to.equal(200);
  });

  it('lets an address that failed fewer than 20 times sign in', async () => {
    for (let i = 0; i < failedSignInsAllowed - 1; i += 1) requestError(await signIn({ adminToken: `wrong-${i}` }), 401);
    expect((await signIn({ adminToken })).status).to.equal(200);
  });
});
