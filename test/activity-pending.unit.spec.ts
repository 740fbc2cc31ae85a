import { expect } from 'chai';
import { PendingActivity } from '../src/activity/pending.js';
import type { RejectedItem } from '../src/activity/recorder.js';

/** Ingest activity waiting to be written: counters per minute and hour, rejected items, and their bounds. */

const item = (message: string): RejectedItem => ({ endpoint: 'events', reason: 'schema', field: 'eventName', status: 400, message, excerpt: null });
/** The memory a pending item of `message` (no excerpt) is counted as: 200 bytes besides two per UTF-16 unit. */
const bytesOf = (message: string): number => 200 + 2 * message.length;
const t = (iso: string): number => Date.parse(iso);

function pending(limits: { maxPendingItemBytes?: number; maxPendingCounts?: number } = {}) {
  const dropped: string[] = [];
  const batch = new PendingActivity({ maxPendingItemBytes: 1024 * 1024, maxPendingCounts: 100, ...limits }, (kind) => dropped.push(kind));
  return { batch, dropped };
}

describe('ingest activity waiting to be written (unit)', () => {
  it('counts per account, minute and endpoint, and rejections per hour, reason and field with the last time seen', () => {
    const { batch } = pending();
    expect(batch.empty).to.equal(true);
    batch.accepted('a', 'events', 3, t('2026-01-01T10:07:10Z'));
    expect(batch.empty).to.equal(false);
    batch.accepted('a', 'events', 2, t('2026-01-01T10:07:50Z'));
    batch.rejected('a', item('bad'), t('2026-01-01T10:07:59.999Z'));
    batch.rejected('a', item('bad'), t('2026-01-01T10:42:00Z'));
    batch.rejected('a', { ...item('bad time'), field: 'eventTime' }, t('2026-01-01T10:43:00Z'));
    expect([...batch.minutes.values()]).to.deep.equal([
      { accountId: 'a', minute: t('2026-01-01T10:07:00Z'), endpoint: 'events', accepted: 5, rejected: 1 },
      { accountId: 'a', minute: t('2026-01-01T10:42:00Z'), endpoint: 'events', accepted: 0, rejected: 1 },
      { accountId: 'a', minute: t('2026-01-01T10:43:00Z'), endpoint: 'events', accepted: 0, rejected: 1 },
    ]);
    expect([...batch.hours.values()]).to.deep.equal([
      { accountId: 'a', hour: t('2026-01-01T10:00:00Z'), endpoint: 'events', reason: 'schema', field: 'eventName', count: 2, lastSeen: t('2026-01-01T10:42:00Z') },
      { accountId: 'a', hour: t('2026-01-01T10:00:00Z'), endpoint: 'events', reason: 'schema', field: 'eventTime', count: 1, lastSeen: t('2026-01-01T10:43:00Z') },
    ]);
    expect(batch.items.map((i) => i.message)).to.deep.equal(['bad', 'bad', 'bad time']);
  });

  it('takes in a later batch behind its own: counts added, the later last time seen, items after its own', () => {
    const { batch } = pending();
    batch.rejected('a', item('first'), t('2026-01-01T10:07:30Z'));
    const later = pending().batch;
    later.accepted('a', 'events', 4, t('2026-01-01T10:07:40Z'));
    later.rejected('a', item('second'), t('2026-01-01T10:20:00Z'));
    later.accepted('b', 'users', 1, t('2026-01-01T11:00:00Z'));
    batch.takeIn(later);
    expect([...batch.minutes.values()]).to.deep.equal([
      { accountId: 'a', minute: t('2026-01-01T10:07:00Z'), endpoint: 'events', accepted: 4, rejected: 1 },
      { accountId: 'a', minute: t('2026-01-01T10:20:00Z'), endpoint: 'events', accepted: 0, rejected: 1 },
      { accountId: 'b', minute: t('2026-01-01T11:00:00Z'), endpoint: 'users', accepted: 1, rejected: 0 },
    ]);
    expect([...batch.hours.values()].map((h) => [h.count, h.lastSeen])).to.deep.equal([[2, t('2026-01-01T10:20:00Z')]]);
    expect(batch.items.map((i) => i.message)).to.deep.equal(['first', 'second']);
    expect(batch.itemBytes).to.equal(bytesOf('first') + bytesOf('second'));
  });

  it('drops a new counter once maxPendingCounts are held, still adding to those it has, and keeps the item', () => {
    const { batch, dropped } = pending({ maxPendingCounts: 2 });
    batch.accepted('a', 'events', 1, t('2026-01-01T10:00:00Z'));
    // A new minute fits (2 counters), its hour does not.
    batch.rejected('a', item('x'), t('2026-01-01T11:00:00Z'));
    expect(batch.counts).to.equal(2);
    expect(dropped).to.deep.equal(['count']);
    batch.rejected('b', item('y'), t('2026-01-01T12:00:00Z'));
    batch.accepted('a', 'events', 1, t('2026-01-01T10:00:30Z'));
    expect(batch.counts).to.equal(2);
    expect(dropped).to.deep.equal(['count', 'count', 'count']);
    expect([...batch.minutes.values()].map((m) => [m.accepted, m.rejected])).to.deep.equal([[2, 0], [0, 1]]);
    expect(batch.items.map((i) => i.message)).to.deep.equal(['x', 'y']);

    const onlyItems = pending({ maxPendingCounts: 0 });
    onlyItems.batch.rejected('a', item('z'), t('2026-01-01T10:00:00Z'));
    expect(onlyItems.batch.counts).to.equal(0);
    expect(onlyItems.batch.empty, 'an item is still to be written').to.equal(false);
  });

  it('keeps items up to maxPendingItemBytes, one account up to half of it, and drops the rest', () => {
    const size = bytesOf('m');
    const { batch, dropped } = pending({ maxPendingItemBytes: 2 * size });
    batch.rejected('a', item('m'), t('2026-01-01T10:00:00Z'));
    expect(batch.itemBytes, 'exactly half, for one account').to.equal(size);
    batch.rejected('a', item('m'), t('2026-01-01T10:00:01Z'));
    expect(dropped).to.deep.equal(['item']);
    batch.rejected('b', item('m'), t('2026-01-01T10:00:02Z'));
    expect(batch.itemBytes, 'exactly the bound').to.equal(2 * size);
    batch.rejected('c', item('m'), t('2026-01-01T10:00:03Z'));
    expect(dropped).to.deep.equal(['item', 'item']);
    expect(batch.items.map((i) => i.accountId)).to.deep.equal(['a', 'b']);
  });
});
