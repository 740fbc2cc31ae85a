import { expect } from 'chai';
import { TestApp } from './support/app.js';
import { allowConnections } from './support/event-stores.js';
import { capturedLog, levels } from './support/log-lines.js';
import { requestError } from './support/replies.js';

describe('store outage logging (e2e)', () => {
  it('logs one warning, not one per request, while the database refuses connections', async () => {
    const { log, lines } = capturedLog();
    const app = await TestApp.start({}, { log });
    const account = await app.account();
    try {
      await allowConnections(app.database, false);
      const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => app.ingest(account, 'events', { userId: `u-${i}`, eventName: 'Viewed' })));
      for (const reply of replies) requestError(reply, 503);
      const warnings = lines.filter((line) => line.level >= levels.warn);
      expect(warnings.map((line) => line.msg)).to.deep.equal(['store unavailable: requests are answered 503 until it is back']);
    } finally {
      await allowConnections(app.database, true);
      await app.stop();
    }
  });
});
