import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { TestApp, type Credentials } from './support/app.js';
import { exportOf, ndjsonLinesOf, type ExportLine } from './support/export-client.js';
import { bulkResults } from './support/replies.js';

/** Items a writer sends, a bulk request of 100 at a time, cycling through the four kinds. */
function itemsOf(writer: number, request: number): { endpoint: string; items: unknown[] } {
  const kinds = ['users/bulk', 'events/bulk', 'products/bulk', 'productsevents/bulk'] as const;
  const endpoint = kinds[request % 4] as string;
  const items = Array.from({ length: 100 }, (_, i) => {
    const n = request * 100 + i;
    const userId = `u-${writer}-${n % 500}`;
    if (endpoint === 'users/bulk') return i % 10 === 0 ? { userId, anonymousId: `a-${writer}-${n}`, attributes: {} } : { userId, email: `${userId}@example.com`, attributes: { n } };
    if (endpoint === 'events/bulk') return { userId, eventName: i % 2 ? 'Viewed' : 'Bought', eventData: { n, text: 'é "quoted", \n line' } };
    if (endpoint === 'products/bulk') return { productId: `p-${n % 300}`, properties: { n } };
    return { productId: `p-${n % 300}`, userId, eventName: 'Added', eventData: { n } };
  });
  return { endpoint, items };
}

describe('an export of 100,000 events (e2e)', function () {
  this.timeout(600_000);
  let app: TestApp;
  let acme: Credentials;
  /** Each writer's trackIDs in the order it was answered. */
  const answered: string[][] = [];

  before(async () => {
    // The rate limits are not what is tested: 25,000 product events are sent within seconds.
    app = await TestApp.start({ productEventsPerMinute: 1_000_000, otherEndpointsPerMinute: 1_000_000 }, { erasureRunner: false });
    acme = await app.account('Acme');
    const other = await app.account('Globex');
    await Promise.all(
      Array.from({ length: 4 }, async (_, writer) => {
        const mine: string[] = [];
        answered.push(mine);
        for (let request = 0; request < 250; request += 1) {
          const { endpoint, items } = itemsOf(writer, request);
          const results = bulkResults(await app.ingest(acme, endpoint, items));
          for (const result of results) {
            expect(result.status).to.equal('queued');
            mine.push(result.trackID as string);
          }
        }
      }),
    );
    bulkResults(await app.ingest(other, 'events/bulk', [{ userId: 'globex-only', eventName: 'x' }]));
  });
  after(() => app.stop());

  let full: { text: string; lines: ExportLine[] };

  it('holds exactly the acknowledged trackIDs, each writer in the order it was answered, and the same bytes again', async () => {
    const reply = await exportOf(app, acme);
    expect(reply.complete).to.equal(true);
    full = { text: reply.text, lines: ndjsonLinesOf(reply.text) };
    const acknowledged = answered.flat();
    expect(acknowledged).to.have.length(100_000);
    // A profile naming both ids is also a merge: its events share the trackID.
    const firstAt = new Map<string, number>();
    full.lines.forEach((line, at) => {
      if (!firstAt.has(line.trackID)) firstAt.set(line.trackID, at);
    });
    expect(firstAt.size).to.equal(100_000);
    for (const trackID of acknowledged) expect(firstAt.has(trackID), trackID).to.equal(true);
    expect(full.lines.filter((line) => line.eventType === 'ProfilesMerged')).to.have.length(4 * 63 * 10);
    expect(new Set(full.lines.map((line) => line.eventId)).size).to.equal(full.lines.length);
    for (const mine of answered) {
      const positions = mine.map((trackID) => firstAt.get(trackID) as number);
      expect(positions.every((at, i) => i === 0 || at > (positions[i - 1] as number))).to.equal(true);
    }
    expect((await exportOf(app, acme)).text === full.text).to.equal(true);
  });

  it('resumed from its last line after cuts at random bytes, gives the same events: no gap, no duplicate', async () => {
    const ids = full.lines.map((line) => line.eventId);
    for (let cut = 0; cut < 4; cut += 1) {
      const cutAt = 1 + Math.floor(Math.random() * (full.text.length - 1));
      const first = ndjsonLinesOf((await exportOf(app, acme, {}, { cutAfterBytes: cutAt })).text);
      const last = first.at(-1);
      const rest = ndjsonLinesOf((await exportOf(app, acme, last ? { after: last.cursor } : {})).text);
      const joined = [...first, ...rest].map((line) => line.eventId);
      expect(joined.length === ids.length && joined.every((id, i) => id === ids[i]), `cut at byte ${cutAt}`).to.equal(true);
    }
  });

  it('gives each kind as CSV with its columns, a row an event', async () => {
    for (const kind of ['users', 'events', 'products', 'productsevents']) {
      const reply = await exportOf(app, acme, { format: 'csv', kind });
      const rows = parse(reply.text, { columns: true }) as Record<string, string>[];
      expect(rows, kind).to.have.length(full.lines.filter((line) => line.kind === kind).length);
      expect(Object.keys(rows[0] ?? {}).at(-1)).to.equal('cursor');
      if (kind === 'events') expect(JSON.parse(rows[0]?.event_data ?? '')).to.deep.include({ text: 'é "quoted", \n line' });
    }
  });
});
