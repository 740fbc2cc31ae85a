import { expect } from 'chai';
import { servedApp, TestApp, type Credentials } from './support/app.js';
import { defaultRateLimits, type ItemEndpoint } from './support/documented-limits.js';

/**
 * The rate limits of the default configuration (no PRODUCTSEVENTS_RATE_LIMIT, no INGEST_RATE_LIMIT)
 * as a client reads them from each endpoint's RateLimit headers (docs/decisions.md, Limits).
 */
describe('default rate limits as a client sees them (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  const items: Record<ItemEndpoint, Record<string, unknown>> = {
    users: { userId: 'u-1', attributes: {} },
    events: { userId: 'u-1', eventName: 'Viewed' },
    products: { productId: 'p-1' },
    productsevents: { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' },
  };

  for (const [endpoint, item] of Object.entries(items) as Array<[ItemEndpoint, Record<string, unknown>]>) {
    const limit = endpoint === 'productsevents' ? defaultRateLimits.productsevents : defaultRateLimits.others;
    it(`${endpoint} and ${endpoint}/bulk: RateLimit-Limit ${limit} a minute by default`, async () => {
      // A product event in bulk counts one against the same limit.
      const sent = [await app.ingest(account, endpoint, item), await app.ingest(account, `${endpoint}/bulk`, [item])];
      for (const [index, reply] of sent.entries()) {
        const what = index === 0 ? endpoint : `${endpoint}/bulk`;
        expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).to.equal(200);
        expect(reply.headers.get('ratelimit-limit'), what).to.equal(String(limit));
        expect(reply.headers.get('ratelimit-policy'), what).to.equal(`${limit};w=60`);
      }
      expect(sent.map((reply) => Number(reply.headers.get('ratelimit-remaining')))).to.deep.equal(
        endpoint === 'productsevents' ? [limit - 1, limit - 2] : [limit - 1, limit - 1],
      );
    });
  }
});
