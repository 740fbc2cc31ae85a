import { expect } from 'chai';
import { deviceTypeOf, keptAddress, truncatedAddress } from '../src/ingest/segment-context.js';
import { v5 as uuidv5 } from 'uuid';
import { mapMessage, messageIdNamespace, messageTrackId } from '../src/ingest/segment-messages.js';
import { messageTime, requestClock } from '../src/ingest/segment-time.js';
import { snakeKey } from '../src/ingest/segment-traits.js';

const account = '11111111-1111-4111-8111-111111111111';
const settings = { accountId: account, clock: requestClock('2024-05-01T12:00:00.000Z'), addressPolicy: 'truncate' as const };

describe("Segment's messages, piece by piece (unit)", () => {
  it('writes trait keys as the spec names keys, and refuses those it cannot', () => {
    expect(['planName', 'Plan Name', 'plan-name', 'HTTPStatus', 'utm_source', 'a.b.c', '  x  '].map(snakeKey)).to.deep.equal(['plan_name', 'plan_name', 'plan_name', 'http_status', 'utm_source', 'a_b_c', 'x']);
    expect(['9lives', '$$', '', 'é', 'k'.repeat(101)].map(snakeKey)).to.deep.equal([null, null, null, null, null]);
    // A long run of capitals is read in one pass, and a key too long is refused before any.
    const started = Date.now();
    expect(snakeKey('A'.repeat(400))).to.equal(null);
    expect(snakeKey(`${'A'.repeat(1_000_000)}b`)).to.equal(null);
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('keeps, truncates or drops an address as the account says', () => {
    expect(truncatedAddress('203.0.113.77')).to.equal('203.0.113.0');
    expect(truncatedAddress('2001:db8:85a3:8d3:1319:8a2e:370:7348')).to.equal('2001:db8:85a3::');
    expect(truncatedAddress('2001:DB8::1')).to.equal('2001:db8:0::');
    expect(truncatedAddress('::ffff:198.51.100.9')).to.equal('198.51.100.0');
    expect(keptAddress('203.0.113.77', 'keep')).to.equal('203.0.113.77');
    expect(keptAddress('203.0.113.77', 'drop')).to.equal(null);
    expect(keptAddress('not an address', 'keep')).to.equal(null);
  });

  it('tells the device type of a user agent, and nothing for a client it does not know', () => {
    expect(deviceTypeOf('Mozilla/5.0 (iPad; CPU OS 13_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.0 Mobile/15E148 Safari/604.1')).to.equal('tablet');
    expect(deviceTypeOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36')).to.equal('desktop');
    expect(deviceTypeOf('analytics-node-next/latest')).to.equal(null);
  });

  it("corrects the device's clock by sentAt, as Segment does", () => {
    const receivedAt = '2024-05-01T12:00:00.000Z';
    const clock = requestClock(receivedAt);
    expect(messageTime({ timestamp: '2024-05-01T15:00:00.000Z' }, requestClock(receivedAt, '2024-05-01T15:00:10.000Z'))).to.deep.equal({ eventTime: '2024-05-01T11:59:50.000Z' });
    expect(messageTime({ originalTimestamp: '2024-05-01T11:00:00Z', sentAt: '2024-05-01T11:00:00Z' }, requestClock(receivedAt, 'not read: the message has its own'))).to.deep.equal({ eventTime: '2024-05-01T12:00:00.000Z' });
    expect(messageTime({ timestamp: '2020-01-01T00:00:00+0200' }, clock)).to.deep.equal({ eventTime: '2020-01-01T00:00:00+0200' });
    expect(messageTime({}, requestClock(receivedAt, '2024-05-01T12:00:00Z'))).to.deep.equal({});
    expect(messageTime({ timestamp: '2024-05-03T12:00:00Z' }, clock)).to.have.property('field', 'timestamp');
    expect(messageTime({ timestamp: receivedAt }, requestClock(receivedAt, 'yesterday'))).to.have.property('field', 'sentAt');
    expect(messageTime({ timestamp: null, originalTimestamp: '2020-01-01T00:00:00Z' }, clock)).to.deep.equal({ eventTime: '2020-01-01T00:00:00Z' });
  });

  it('derives the trackID from the account and the messageId, and the ids of further items from the trackID', () => {
    expect(messageTrackId(account, 'm-1')).to.equal(messageTrackId(account, 'm-1'));
    for (const messageId of ['m-1', 'ajs-next-1795833355504-1519b629', 'ünïcødé ✓', 'x'.repeat(255)]) {
      expect(messageTrackId(account, messageId)).to.equal(uuidv5(`${account}\n${messageId}`, messageIdNamespace));
    }
    expect(messageTrackId(account, 'm-1')).to.not.equal(messageTrackId('22222222-2222-4222-8222-222222222222', 'm-1'));
    expect(messageTrackId(account, undefined)).to.not.equal(messageTrackId(account, undefined));
    const order = { type: 'track', userId: 'u', messageId: 'm-2', event: 'Order Completed', properties: { products: [{ product_id: 'a' }, { product_id: 'b' }] } };
    const first = mapMessage(order, undefined, settings);
    const second = mapMessage(order, undefined, settings);
    expect('items' in first && first.items.map((i) => i.eventId)).to.deep.equal('items' in second && second.items.map((i) => i.eventId));
    expect('items' in first && new Set(first.items.map((i) => i.eventId)).size).to.equal(3);
  });

  it('keeps an address sent as a trait as the account says, as the context\'s', () => {
    const identify = { type: 'identify', userId: 'u', traits: { ip: '203.0.113.77' }, context: { ip: '198.51.100.1' } };
    const attributes = (policy: 'keep' | 'truncate' | 'drop') => {
      const mapped = mapMessage(identify, undefined, { ...settings, addressPolicy: policy });
      return 'items' in mapped ? mapped.items[0]?.item.attributes : null;
    };
    expect(attributes('keep')).to.deep.equal({ ip: '203.0.113.77' });
    expect(attributes('truncate')).to.deep.equal({ ip: '203.0.113.0' });
    expect(attributes('drop')).to.deep.equal({});
  });

  it('reads the batch context field by field for messages without their own', () => {
    const shared = { library: { name: 'analytics-go', version: '3.3.0' }, campaign: { source: 'ads' }, extra: 'x'.repeat(1000) };
    const mapped = mapMessage({ type: 'page', anonymousId: 'a', context: { userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' } }, undefined, { ...settings, sharedContext: shared });
    expect(mapped.source.library).to.equal('analytics-go 3.3.0');
    expect('items' in mapped && mapped.items[1]?.item).to.include({ utm_source: 'ads', device_type: 'mobile' });
  });

  it('names the library of a message, and refuses what is not a message', () => {
    const mapped = mapMessage({ type: 'track', event: 'E', userId: 'u', context: { library: { name: 'analytics-ruby', version: '2.4.0' } } }, undefined, settings);
    expect(mapped.source.library).to.equal('analytics-ruby 2.4.0');
    expect(mapMessage('text', undefined, settings)).to.have.nested.property('refused.message', 'a message must be a JSON object');
    expect(mapMessage({ type: 'track', event: 'E', userId: 'u', messageId: '' }, undefined, settings)).to.have.nested.property('refused.field', 'messageId');
  });
});
