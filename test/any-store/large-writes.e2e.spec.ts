import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { eventStoreUnderTest, servedApp, TestApp, type Credentials } from '../support/app.js';
import { accountRefs } from '../support/id-refs.js';
import { bulkResults, queued, requestError, storesNothing } from '../support/replies.js';

const mib = 1024 * 1024;

/**
 * Text that deflating cannot shrink much: random printable ASCII (without `"` and `\`, so that it
 * is a JSON string as it is). The personal fields of a stored event are deflated, then sealed and
 * written as base64, so such text grows by about a tenth on its way into the store, where
 * repeated text would shrink to almost nothing.
 */
function incompressible(length: number): string {
  const bytes = randomBytes(length);
  let text = '';
  for (const byte of bytes) {
    const code = 0x20 + (byte % 95);
    text += code === 0x22 || code === 0x5c ? 'z' : String.fromCharCode(code);
  }
  return text;
}

/**
 * An event body under the 1 MiB body limit (and the 10,000 values an item may hold) whose stored
 * event passes 1 MiB: `1e20` is stored as the number it is, written out in full (21 digits), and
 * the sealed blob takes more bytes than the text sent.
 */
const expandingEvent = (userId: string): string =>
  `{"userId":"${userId}","eventName":"expands","eventData":{"blob":"${incompressible(990_000)}","values":[${Array.from({ length: 9_900 }, () => '1e20').join(',')}]}}`;

/**
 * Requests whose events weigh more than one EventStoreDB write may hold (1 MiB, the server's
 * default MaxAppendSize, which the test double enforces): under the body limits, they are stored
 * in several writes; an item too large for one write is refused before anything is written.
 */
describe('requests over 1 MiB of events (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started));

  it('stores a bulk request of 2.5 MB of events for one user whole, in the order of its elements', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ userId: i % 10 === 3 ? 'u-other' : 'u-big', eventName: 'viewed', eventData: { i, blob: 'x'.repeat(25_000) } }));
    expect(Buffer.byteLength(JSON.stringify(items.filter((item) => item.userId === 'u-big')))).to.be.above(2 * mib);
    const trackIDs = bulkResults(await app.ingest(account, 'events/bulk', items)).map((result) => {
      expect(result.status).to.equal('queued');
      return result.trackID;
    });

    const stored = await app.events();
    expect(stored.map((e) => e.event_id).sort()).to.deep.equal([...trackIDs].sort());
    const refs = await accountRefs(app, account);
    const bigStream = `user-${refs.accountId}-${refs.user('u-big')}`;
    const big = stored.filter((e) => e.stream_name === bigStream);
    const bigTrackIDs = trackIDs.filter((_, i) => items[i]?.userId === 'u-big');
    expect(big.map((e) => e.event_id)).to.deep.equal(bigTrackIDs);
    expect(big.map((e) => e.stream_position)).to.deep.equal(bigTrackIDs.map((_, i) => i));
    expect(big.map((e) => (e.data as { eventData: { i: number } }).eventData.i)).to.deep.equal(items.flatMap((item) => (item.userId === 'u-big' ? [item.eventData.i] : [])));
  });

  if (eventStoreUnderTest === 'esdb') {
    it('answers 413 naming the element whose event one write cannot hold, and stores nothing of its request', async () => {
      const items = [
        { userId: 'u-1', eventName: 'small' },
        { userId: 'u-2', eventName: 'huge', eventData: { blob: incompressible(1_100_000) } },
        { userId: 'u-3', eventName: 'small' },
      ];
      const message = await storesNothing(app, async () => requestError(await app.ingest(account, 'events/bulk', items), 413));
      expect(message).to.match(/^element \[1\] is too large for the event store: its events take \d+ bytes, more than the 1048576 bytes one write may hold$/);
    });

    it('answers 413 to a single item under the 1 MiB body limit whose event passes 1 MiB, and frees its Idempotency-Key', async () => {
      const body = expandingEvent('u-1');
      expect(Buffer.byteLength(body)).to.be.below(mib);
      const key = randomUUID();
      const message = await storesNothing(app, async () =>
        requestError(await app.ingest(account, 'events', null, { raw: body, headers: { 'idempotency-key': key } }), 413),
      );
      expect(message).to.match(/^the item is too large for the event store: its events take \d+ bytes, more than the 1048576 bytes one write may hold$/);
      expect(Number(/take (\d+) bytes/.exec(message)?.[1])).to.be.above(mib);
      // Nothing was stored: the key is free for a corrected request.
      queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'smaller' }, { headers: { 'idempotency-key': key } }));
    });
  } else {
    it('stores an item whose event passes 1 MiB: only EventStoreDB limits a write', async () => {
      queued(await app.ingest(account, 'events', null, { raw: expandingEvent('u-1') }));
      const [event] = await app.events();
      expect(Buffer.byteLength(JSON.stringify(event?.data))).to.be.above(mib);
    });
  }
});
