import { expect } from 'chai';
import { IngestActivity, type ActivityClient, type ActivityDatabase, type RejectedItem } from '../src/activity/recorder.js';
import { excerptOfBytes, excerptOfText, excerptOfValue } from '../src/ingest/excerpt.js';
import { Metrics } from '../src/metrics.js';
import { capturedLog, levels } from './support/log-lines.js';

/** The recorder without a database: bounded memory while writes fail, and the excerpt rules. */

const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** A database that refuses connections while `down`, and otherwise records the statements of each transaction. */
class FlakyDatabase implements ActivityDatabase {
  down = true;
  readonly statements: { text: string; values?: unknown[] }[] = [];

  connect(): Promise<ActivityClient> {
    if (this.down) return Promise.reject(refused());
    return Promise.resolve({
      query: (text: string, values?: unknown[]) => {
        this.statements.push({ text, values });
        return Promise.resolve({ rows: [] });
      },
      release: () => undefined,
    });
  }

  query(): Promise<unknown> {
    return this.down ? Promise.reject(refused()) : Promise.resolve({ rows: [] });
  }

  /** The values of the INSERT into `table` written last. */
  inserted(table: string): unknown[] | undefined {
    return this.statements.filter((s) => s.text.includes(`INSERT INTO ${table}`)).at(-1)?.values;
  }
}

const bigItem = (n: number): RejectedItem => ({
  endpoint: 'users',
  reason: 'schema',
  field: 'attributes',
  status: 400,
  message: `user ${n} is invalid`,
  excerpt: { text: 'x'.repeat(2048), truncated: true },
});

describe('ingest activity recorder (unit)', () => {
  let activity: IngestActivity | undefined;
  afterEach(async () => {
    await activity?.close();
    activity = undefined;
  });

  it('keeps rejected items within its memory bound while the database is down, counts them all, and writes them once it is back', async () => {
    const db = new FlakyDatabase();
    const { log, lines } = capturedLog('info');
    const metrics = new Metrics(false);
    const maxPendingItemBytes = 64 * 1024;
    // One minute and one hour for every item: two counters in all.
    const at = Date.parse('2026-01-01T10:00:30Z');
    activity = new IngestActivity(db, log, { flushEveryMs: 60_000, maxPendingItemBytes }, metrics);
    for (let tick = 0; tick < 5; tick += 1) {
      // Recording never throws nor waits, whatever the database does.
      for (let n = 0; n < 100; n += 1) {
        activity.rejected('acct-a', bigItem(n), at);
        activity.accepted('acct-a', 'users', 1, at);
      }
      await activity.flush();
      expect(activity.pendingItemBytes).to.be.at.most(maxPendingItemBytes / 2);
    }
    expect(activity.pendingCounts).to.equal(2);
    // Another account still has room: one account fills at most half of the bound.
    activity.rejected('acct-b', bigItem(0), at);
    expect(activity.pendingItemBytes).to.be.above(maxPendingItemBytes / 2).and.at.most(maxPendingItemBytes);
    const warnings = lines.filter((l) => l.level === levels.warn);
    expect(warnings.map((l) => l.msg)).to.deep.equal([
      'ingest activity dropped: too much waiting to be written',
      'ingest activity not recorded: the database is unavailable; kept in memory (bounded) and retried every second',
    ]);
    expect((await metrics.registry.getSingleMetricAsString('tracking_ingest_activity_dropped_total'))).to.match(/kind="item"\} \d+/);

    db.down = false;
    await activity.flush();
    expect(activity.pendingItemBytes).to.equal(0);
    expect(activity.pendingCounts).to.equal(0);
    const counts = db.inserted('ingest_activity_minutes') as unknown[][];
    expect(counts[3]).to.deep.equal([500, 0]);
    expect(counts[4]).to.deep.equal([500, 1]);
    const hourly = db.inserted('ingest_rejections_hourly') as unknown[][];
    expect(hourly[4], 'fields').to.deep.equal(['attributes', 'attributes']);
    expect(hourly[5]).to.deep.equal([500, 1]);
    const items = db.inserted('ingest_rejected_items') as unknown[][];
    expect((items[0] as string[]).filter((a) => a === 'acct-a').length).to.be.within(1, 15);
    expect(lines.filter((l) => l.msg === 'ingest activity recorded again')).to.have.length(1);
  });

  it('drops new counters past maxPendingCounts', async () => {
    const db = new FlakyDatabase();
    activity = new IngestActivity(db, capturedLog().log, { flushEveryMs: 60_000, maxPendingCounts: 3 });
    for (let n = 0; n < 10; n += 1) activity.accepted(`acct-${n}`, 'events');
    expect(activity.pendingCounts).to.equal(3);
    await activity.flush();
    expect(activity.pendingCounts).to.equal(3);
  });
});

/** A database that takes connections and fails every INSERT with an error of SQL, not of availability. */
class BrokenDatabase extends FlakyDatabase {
  override connect(): Promise<ActivityClient> {
    return Promise.resolve({
      query: (text: string) =>
        text.includes('INSERT INTO') ? Promise.reject(Object.assign(new Error('relation does not exist'), { code: '42P01' })) : Promise.resolve({ rows: [] }),
      release: () => undefined,
    });
  }
}

const rejection = (message: string): RejectedItem => ({ endpoint: 'events', reason: 'schema', field: 'eventName', status: 400, message, excerpt: null });

describe('ingest activity recorder: what it writes and when it gives up (unit)', () => {
  let activity: IngestActivity | undefined;
  afterEach(async () => {
    await activity?.close();
    activity = undefined;
  });

  it('writes rows in the order of their keys in every process, and only the latest itemsPerAccount items of each account', async () => {
    const db = new FlakyDatabase();
    db.down = false;
    activity = new IngestActivity(db, capturedLog().log, { flushEveryMs: 60_000, itemsPerAccount: 2 });
    const at = Date.parse('2026-01-01T10:00:30Z');
    for (const [account, message] of [['b', 'b1'], ['a', 'a1'], ['b', 'b2'], ['a', 'a2'], ['a', 'a3']] as const) {
      activity.rejected(account, rejection(message), at);
    }
    activity.accepted('c', 'users', 1, at);
    activity.rejected('a', { ...rejection('a4'), reason: 'json' }, at);
    await activity.flush();
    const minutes = db.inserted('ingest_activity_minutes') as unknown[][];
    expect([minutes[0], minutes[2]]).to.deep.equal([['a', 'b', 'c'], ['events', 'events', 'users']]);
    const hourly = db.inserted('ingest_rejections_hourly') as unknown[][];
    expect([hourly[0], hourly[3], hourly[4], hourly[5]]).to.deep.equal([['a', 'a', 'b'], ['json', 'schema', 'schema'], ['eventName', 'eventName', 'eventName'], [1, 3, 2]]);
    const items = db.inserted('ingest_rejected_items') as unknown[][];
    expect(items[6], 'the latest two of each account, in the order they came').to.deep.equal(['b1', 'b2', 'a3', 'a4']);
  });

  it('drops a batch that fails for another reason than an unavailable database, and says so', async () => {
    const { log, lines } = capturedLog('info');
    activity = new IngestActivity(new BrokenDatabase(), log, { flushEveryMs: 60_000 });
    activity.rejected('a', rejection('x'), Date.now());
    await activity.flush();
    expect(activity.pendingCounts).to.equal(0);
    expect(activity.pendingItemBytes).to.equal(0);
    const errors = lines.filter((l) => l.level === levels.error);
    expect(errors.map((l) => [l.msg, l.counts, l.items])).to.deep.equal([['ingest activity not recorded: dropped', 2, 1]]);
  });

  it('keeps what comes in during a write that fails, with the batch; warns once per outage and per spell of drops', async () => {
    const db = new FlakyDatabase();
    const { log, lines } = capturedLog('info');
    activity = new IngestActivity(db, log, { flushEveryMs: 60_000, maxPendingCounts: 2 });
    const at = Date.parse('2026-01-01T10:00:30Z');
    activity.accepted('a', 'events', 1, at);
    const writing = activity.flush();
    activity.accepted('b', 'events', 1, at);
    await writing;
    expect(activity.pendingCounts, 'the failed batch and what came during it').to.equal(2);
    activity.accepted('c', 'events', 1, at);
    db.down = false;
    await activity.flush();
    activity.accepted('d', 'events', 1, at);
    await activity.flush();
    expect((db.inserted('ingest_activity_minutes') as unknown[][])[0]).to.deep.equal(['d']);
    for (const account of ['e', 'f', 'g']) activity.accepted(account, 'events', 1, at);
    expect(lines.filter((l) => l.level >= levels.info).map((l) => l.msg)).to.deep.equal([
      'ingest activity not recorded: the database is unavailable; kept in memory (bounded) and retried every second',
      'ingest activity dropped: too much waiting to be written',
      'ingest activity recorded again',
      'ingest activity dropped: too much waiting to be written',
    ]);
  });
});

describe('ingest activity excerpts (unit)', () => {
  it('cuts raw bytes at a character boundary, at most 2 KB', () => {
    const body = Buffer.from(`{"a":"${'€'.repeat(1000)}"}`);
    const excerpt = excerptOfBytes(body);
    expect(excerpt.truncated).to.equal(true);
    expect(Buffer.byteLength(excerpt.text)).to.equal(2046);
    expect(body.toString().startsWith(excerpt.text)).to.equal(true);
    expect(excerptOfBytes(Buffer.from('{"a":1}'))).to.deep.equal({ text: '{"a":1}', truncated: false });
  });

  it('keeps bytes that are not UTF-8, and NULs, as U+FFFD within the bound', () => {
    const excerpt = excerptOfBytes(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.alloc(3000, 0xc0)]));
    expect(excerpt.text.startsWith('\uFFFD\uFFFD')).to.equal(true);
    expect(excerpt.text).to.not.contain('\u0000');
    expect(Buffer.byteLength(excerpt.text)).to.be.at.most(2048);
    expect(excerpt.truncated).to.equal(true);
  });

  it('cuts text and JSON values the same way', () => {
    expect(excerptOfText('😀'.repeat(600)).text).to.equal('😀'.repeat(512));
    expect(excerptOfText('ok')).to.deep.equal({ text: 'ok', truncated: false });
    expect(excerptOfValue({ userId: 'u\u0000' })).to.deep.equal({ text: '{"userId":"u\\u0000"}', truncated: false });
  });

  it('marks a text cut only when it is longer than the bound, and keeps no NUL', () => {
    expect(excerptOfText('a'.repeat(2048))).to.deep.equal({ text: 'a'.repeat(2048), truncated: false });
    expect(excerptOfText('a'.repeat(1000))).to.deep.equal({ text: 'a'.repeat(1000), truncated: false });
    expect(excerptOfText('a'.repeat(2049))).to.deep.equal({ text: 'a'.repeat(2048), truncated: true });
    expect(excerptOfText('😀'.repeat(600)).truncated).to.equal(true);
    expect(excerptOfText('a\u0000b')).to.deep.equal({ text: 'a\uFFFDb', truncated: false });
    expect(excerptOfText(`${'é'.repeat(1500)}\u0000`).text).to.equal('é'.repeat(1024));
  });

  it('gives an empty excerpt for bytes with no character start within the bound, and a value JSON cannot write as text', () => {
    expect(excerptOfBytes(Buffer.alloc(3000, 0x80))).to.deep.equal({ text: '', truncated: true });
    expect(excerptOfValue(10n)).to.deep.equal({ text: '10', truncated: false });
  });
});
