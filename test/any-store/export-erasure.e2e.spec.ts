import { expect } from 'chai';
import { TestApp, type Credentials } from '../support/app.js';
import { erasureDone } from '../support/erasures.js';
import { exportOf, feedOf, ndjsonLinesOf, type ExportLine } from '../support/export-client.js';
import { queued } from '../support/replies.js';

describe('the export and the feed after an erasure (e2e, on the store under test)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let acme: Credentials;

  before(async () => {
    app = await TestApp.start({}, { projections: true });
    acme = await app.account('Acme');
  });
  after(() => app.stop());

  it('hold nothing of the erased person: their events come marked erased, with no id and no value of theirs', async () => {
    const secrets = ['erased-user-9', 'erased-anon-9', 'secret.mail@example.com', 'secret-attribute', 'Secret Event', 'secret-data', 'secret-product-note'];
    const trackIds = [
      queued(await app.ingest(acme, 'users', { anonymousId: 'erased-anon-9', attributes: { note: 'secret-attribute' } })),
      queued(await app.ingest(acme, 'users', { userId: 'erased-user-9', anonymousId: 'erased-anon-9', email: 'secret.mail@example.com', attributes: {} })),
      queued(await app.ingest(acme, 'events', { userId: 'erased-user-9', eventName: 'Secret Event', eventData: { note: 'secret-data' } })),
      queued(await app.ingest(acme, 'products', { productId: 'p-kept', userId: 'erased-user-9', properties: { note: 'secret-product-note' } })),
      queued(await app.ingest(acme, 'productsevents', { productId: 'p-kept', userId: 'erased-user-9', eventName: 'Secret Event', eventData: { note: 'secret-data' } })),
    ];
    const kept = queued(await app.ingest(acme, 'events', { userId: 'someone-else', eventName: 'Kept', eventData: { note: 'kept-data' } }));
    await app.projected();
    const before = (await exportOf(app, acme)).text;
    for (const secret of secrets) expect(before).to.contain(secret);

    const erasure = await erasureDone(app, acme, { userId: 'erased-user-9' });
    const after = await exportOf(app, acme);
    const texts = [after.text];
    for (const kind of ['users', 'events', 'products', 'productsevents']) texts.push((await exportOf(app, acme, { format: 'csv', kind })).text);
    texts.push(JSON.stringify((await feedOf(app, acme, { limit: '1000' })).body));
    for (const text of texts) for (const secret of secrets) expect(text).not.to.contain(secret);
    for (const text of texts) expect(text).not.to.match(/userRef|anonymousRef/);

    const lines = ndjsonLinesOf(after.text);
    const erasedLines = lines.filter((line) => trackIds.includes(line.trackID));
    expect(erasedLines.length).to.be.at.least(trackIds.length);
    for (const line of erasedLines) expect(line.erased, line.eventType).to.deep.include({ erasureId: erasure.id });
    const product = erasedLines.find((line) => line.eventType === 'ProductSubmitted') as ExportLine;
    expect(product.data).to.deep.equal({ productId: 'p-kept', properties: {} });
    const other = lines.find((line) => line.trackID === kept) as ExportLine;
    expect([other.erased, other.data.eventData]).to.deep.equal([null, { note: 'kept-data' }]);
    // The person is no filter any more: their id is not in what is kept.
    expect(ndjsonLinesOf((await exportOf(app, acme, { user: 'erased-user-9' })).text)).to.deep.equal([]);
  });
});
