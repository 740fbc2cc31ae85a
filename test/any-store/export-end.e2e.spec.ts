import { expect } from 'chai';
import { exportPages } from '../../src/export/pages.js';
import { TestApp } from '../support/app.js';
import { bulkResults, queued } from '../support/replies.js';

describe('the end of an export (e2e, on the store under test)', function () {
  this.timeout(120_000);

  it('is the events stored when it began: what is appended while its pages are read waits for the next export', async () => {
    const app = await TestApp.start({}, { erasureRunner: false });
    try {
      const busy = await app.account('Busy');
      const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [busy.licenseCode]);
      const accountId = rows[0]?.id as string;
      const before: string[] = [];
      // More than two pages: the export is still reading when the appends below come.
      for (let request = 0; request < 50; request += 1) {
        const results = bulkResults(await app.ingest(busy, 'events/bulk', Array.from({ length: 100 }, (_, i) => ({ userId: `u-${i}`, eventName: 'Before', eventData: { request, i } }))));
        before.push(...results.map((result) => result.trackID as string));
      }
      const pages = exportPages(app.services.store, accountId, null, {});
      const exported: string[] = [];
      const later: string[] = [];
      for await (const page of pages) {
        exported.push(...page.events.map((event) => event.trackID));
        if (later.length === 0) for (let i = 0; i < 20; i += 1) later.push(queued(await app.ingest(busy, 'events', { userId: 'u-late', eventName: 'During', eventData: { i } })));
      }
      expect(exported.length === before.length && exported.every((trackID, i) => trackID === before[i])).to.equal(true);
      expect(exported.filter((trackID) => later.includes(trackID))).to.deep.equal([]);
    } finally {
      await app.stop();
    }
  });
});
