import { connect } from 'node:net';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { TestApp, type Credentials } from '../support/app.js';
import { exportOf, feedOf, ndjsonLinesOf, type ExportLine } from '../support/export-client.js';
import { queued } from '../support/replies.js';

describe('the export and the feed of the events of an account (e2e, on the store under test)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let acme: Credentials;
  let globex: Credentials;
  /** The trackIDs acme was answered, in the order of the replies. */
  let acknowledged: string[];

  before(async () => {
    app = await TestApp.start({}, { erasureRunner: false });
    acme = await app.account('Acme');
    globex = await app.account('Globex');
    acknowledged = [];
    const sent = async (endpoint: string, body: unknown): Promise<void> => {
      acknowledged.push(queued(await app.ingest(acme, endpoint, body)));
    };
    await sent('users', { userId: 'u-1', email: 'ada@example.com', firstName: 'Ada', attributes: { plan: 'pro' } });
    await sent('users', { anonymousId: 'anon-1', attributes: { seen: 1 } });
    await sent('events', { anonymousId: 'anon-1', eventName: 'Viewed', eventTime: '2026-11-01T10:00:00Z', eventData: { page: '/a' } });
    // A profile naming both ids: a merge of anon-1 into u-1 as well.
    await sent('users', { userId: 'u-1', anonymousId: 'anon-1', attributes: {} });
    await sent('events', { userId: 'u-1', eventName: 'Bought', eventTime: '2026-11-02T10:00:00Z', eventData: { total: 12.5, note: 'a "quoted", comma' } });
    await sent('products', { productId: 'p-1', userId: 'u-1', properties: { name: 'Lamp', price: 30 } });
    await sent('productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'Added', eventTime: '2026-11-03T10:00:00Z', eventData: { qty: 2 } });
    await sent('events', { userId: 'u-2', eventName: 'Viewed', eventData: { page: '/b' } });
    queued(await app.ingest(globex, 'users', { userId: 'u-1', email: 'globex-only@example.com', attributes: {} }));
    queued(await app.ingest(globex, 'events', { userId: 'u-1', eventName: 'Viewed', eventData: { page: 'globex-only' } }));
  });
  after(async () => {
    await app.stop();
  });

  /** The reply of `call` once the requests started before it hold their slots (they arrive in turn). */
  async function until429<T extends { status: number }>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const reply = await call();
      if (reply.status === 429) return reply;
      await new Promise((done) => setTimeout(done, 20));
    }
    throw new Error('the request was never refused');
  }

  async function fullExport(query: Record<string, string> = {}): Promise<{ text: string; lines: ExportLine[] }> {
    const reply = await exportOf(app, acme, query);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.complete).to.equal(true);
    return { text: reply.text, lines: ndjsonLinesOf(reply.text) };
  }

  it('gives every acknowledged item of the account once, opened, in the order of the store, and the same bytes again', async () => {
    const { text, lines } = await fullExport();
    expect([...new Set(lines.map((line) => line.trackID))]).to.have.members(acknowledged);
    expect(new Set(lines.map((line) => line.eventId)).size).to.equal(lines.length);
    expect(text).not.to.contain('globex-only');
    expect(lines.map((line) => line.eventType)).to.include.members(['UserUpserted', 'ProfilesMerged', 'EventTracked', 'ProductSubmitted', 'ProductEventTracked']);
    const ada = lines.find((line) => line.data.userId === 'u-1' && line.eventType === 'UserUpserted');
    expect(ada?.data.profile).to.deep.include({ email: 'ada@example.com', firstName: 'Ada' });
    expect(ada?.data.attributes).to.deep.equal({ plan: 'pro' });
    expect(ada?.erased).to.equal(null);
    const merge = lines.find((line) => line.eventType === 'ProfilesMerged');
    expect(merge?.data).to.deep.equal({ userId: 'u-1', anonymousId: 'anon-1' });
    expect(merge?.kind).to.equal('users');
    // The store's order: what was acknowledged one after another comes in that order.
    const firstOf = (trackID: string): number => lines.findIndex((line) => line.trackID === trackID);
    const order = acknowledged.map(firstOf);
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    expect((await fullExport()).text).to.equal(text);
  });

  it('continues from the cursor of any event: together, the events of the whole export, none twice', async () => {
    const { lines } = await fullExport();
    for (let at = 0; at < lines.length; at += 1) {
      const rest = (await fullExport({ after: (lines[at] as ExportLine).cursor })).lines;
      expect(rest.map((line) => line.eventId), `after event ${at}`).to.deep.equal(lines.slice(at + 1).map((line) => line.eventId));
    }
  });

  it('resumes an export cut off at any byte from the last line it has: no gap, no duplicate', async () => {
    const { text, lines } = await fullExport();
    for (const cutAt of [1, 100, Math.floor(text.length / 3), Math.floor(text.length / 2), text.length - 5]) {
      const cut = await exportOf(app, acme, {}, { cutAfterBytes: cutAt });
      const got = ndjsonLinesOf(cut.text);
      const last = got.at(-1);
      const rest = last ? (await fullExport({ after: last.cursor })).lines : (await fullExport()).lines;
      expect([...got, ...rest].map((line) => line.eventId), `cut at byte ${cutAt}`).to.deep.equal(lines.map((line) => line.eventId));
    }
  });

  it('ends at the events stored when it began, however fast the account writes while its client reads', async () => {
    const busy = await app.account('Busy');
    const earlier: string[] = [];
    for (let i = 0; i < 5; i += 1) earlier.push(queued(await app.ingest(busy, 'events', { userId: 'u-early', eventName: 'Before', eventData: { i } })));
    const later: string[] = [];
    const reply = await exportOf(app, busy, {}, {
      // The reply has begun: every append from now on began after the export did.
      whilePaused: async () => {
        for (let i = 0; i < 30; i += 1) later.push(queued(await app.ingest(busy, 'events', { userId: 'u-late', eventName: 'During', eventData: { i } })));
      },
    });
    expect(reply.complete).to.equal(true);
    expect(ndjsonLinesOf(reply.text).map((line) => line.trackID)).to.deep.equal(earlier);
    // The trailer's cursor continues with them.
    const next = await exportOf(app, busy, { after: reply.trailers['export-cursor'] });
    expect(ndjsonLinesOf(next.text).map((line) => line.trackID)).to.deep.equal(later);
  });

  it('filters by kind, event name, person and time, received or the time of the event', async () => {
    const ids = (lines: ExportLine[]): string[] => lines.map((line) => `${line.eventType}:${String(line.data.eventName ?? '')}`);
    expect(ids((await fullExport({ kind: 'events' })).lines)).to.deep.equal(['EventTracked:Viewed', 'EventTracked:Bought', 'EventTracked:Viewed']);
    expect(ids((await fullExport({ name: 'Viewed' })).lines)).to.deep.equal(['EventTracked:Viewed', 'EventTracked:Viewed']);
    expect((await fullExport({ user: 'u-2' })).lines.map((line) => line.data.userId)).to.deep.equal(['u-2']);
    // As Live events: an item of a known user is theirs, also when it names an anonymous id too.
    const anon = (await fullExport({ user: 'anon-1' })).lines;
    expect(anon.map((line) => line.eventType)).to.deep.equal(['UserUpserted', 'EventTracked']);
    const byEventTime = (await fullExport({ time: 'event', from: '2026-11-02', to: '2026-11-03T10:00:00Z' })).lines;
    expect(ids(byEventTime)).to.deep.equal(['EventTracked:Bought']);
    const all = (await fullExport()).lines;
    const middle = all[Math.floor(all.length / 2)] as ExportLine;
    const received = (await fullExport({ from: middle.receivedAt })).lines;
    expect(received.length).to.be.greaterThan(0);
    expect(received.every((line) => Date.parse(line.receivedAt) >= Date.parse(middle.receivedAt))).to.equal(true);
    expect((await fullExport({ to: '2000-01-01' })).lines).to.deep.equal([]);
  });

  it('gives a CSV of one kind with its columns, values as text and objects as JSON', async () => {
    const reply = await exportOf(app, acme, { format: 'csv', kind: 'events' });
    expect(reply.status).to.equal(200);
    expect(reply.headers['content-type']).to.match(/^text\/csv/);
    expect(reply.headers['content-disposition']).to.equal('attachment; filename="events-events.csv"');
    const rows = parse(reply.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0] ?? {})).to.deep.equal(['event_id', 'track_id', 'received_at', 'event_time', 'event_time_utc', 'user_id', 'anonymous_id', 'event_name', 'event_data', 'erasure_id', 'erased_at', 'cursor']);
    const bought = rows.find((row) => row.event_name === 'Bought');
    expect(JSON.parse(bought?.event_data ?? '')).to.deep.equal({ total: 12.5, note: 'a "quoted", comma' });
    expect(bought).to.include({ user_id: 'u-1', anonymous_id: '', event_time: '2026-11-02T10:00:00Z', erasure_id: '' });
    for (const [kind, columns] of [
      ['users', 'event_id,track_id,event_type,received_at,user_id,anonymous_id,profile,attributes,erasure_id,erased_at,cursor'],
      ['products', 'event_id,track_id,received_at,product_id,user_id,properties,erasure_id,erased_at,cursor'],
      ['productsevents', 'event_id,track_id,received_at,event_time,event_time_utc,product_id,user_id,event_name,event_data,erasure_id,erased_at,cursor'],
    ] as const) {
      const text = (await exportOf(app, acme, { format: 'csv', kind })).text;
      expect(text.split('\n')[0], kind).to.equal(columns);
    }
    const continued = await exportOf(app, acme, { format: 'csv', kind: 'events', header: 'false', after: rows[0]?.cursor });
    expect(parse(continued.text)).to.have.length(rows.length - 1);
  });

  it('gives a Parquet file of one kind with the columns of its CSV, instants as timestamps, objects as JSON', async () => {
    const reply = await exportOf(app, acme, { format: 'parquet', kind: 'events' });
    expect([reply.status, reply.complete, reply.headers['content-type'], reply.headers['content-disposition']]).to.deep.equal([200, true, 'application/vnd.apache.parquet', 'attachment; filename="events-events.parquet"']);
    const file = reply.bytes.buffer.slice(reply.bytes.byteOffset, reply.bytes.byteOffset + reply.bytes.byteLength) as ArrayBuffer;
    const metadata = parquetMetadata(file);
    const csv = parse((await exportOf(app, acme, { format: 'csv', kind: 'events' })).text, { columns: true }) as Record<string, string>[];
    expect(metadata.schema.slice(1).map((element) => element.name)).to.deep.equal(Object.keys(csv[0] ?? {}));
    const rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
    expect(rows.map((row) => row.event_id)).to.deep.equal(csv.map((row) => row.event_id));
    const bought = rows.find((row) => row.event_name === 'Bought');
    expect(bought?.event_data).to.deep.equal({ total: 12.5, note: 'a "quoted", comma' });
    expect(bought?.event_time_utc).to.deep.equal(new Date('2026-11-02T10:00:00Z'));
    expect(bought?.received_at).to.be.instanceOf(Date);
    expect([bought?.anonymous_id, bought?.erased_at]).to.deep.equal([null, null]);
    expect(bought?.cursor).to.equal(csv.find((row) => row.event_name === 'Bought')?.cursor);
  });

  it('answers an HTTP/1.0 client too, without trailers, ending the reply by closing', async () => {
    const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1');
    socket.write(`GET /admin/v1/accounts/${acme.licenseCode}/export HTTP/1.0\r\nAuthorization: Bearer ${acme.accessToken}\r\n\r\n`);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => socket.on('close', resolve));
    const text = Buffer.concat(chunks).toString('utf8');
    const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
    expect(head).to.match(/^HTTP\/1\.1 200 OK/).and.not.match(/trailer/i);
    expect(body).to.equal((await fullExport()).text);
  });

  it('runs at most eight long polls of the feed of an account at once: a ninth is asked to come back', async () => {
    const quiet = await app.account('Quiet');
    queued(await app.ingest(quiet, 'events', { userId: 'u-q', eventName: 'First', eventData: {} }));
    const head = (await feedOf(app, quiet, { limit: '1000' })).body.next ?? undefined;
    const polls = Array.from({ length: 8 }, () => feedOf(app, quiet, { after: head, wait: '20' }));
    const ninth = await until429(() => app.get(`/admin/v1/accounts/${quiet.licenseCode}/feed?wait=1&after=${head ?? ''}`, `Bearer ${quiet.accessToken}`));
    expect(ninth.headers.get('retry-after')).to.equal('1');
    // A page without a wait, and another account's polls, still go.
    expect((await feedOf(app, quiet, { after: head })).status).to.equal(200);
    expect((await feedOf(app, globex, { wait: '1' })).status).to.equal(200);
    const trackID = queued(await app.ingest(quiet, 'events', { userId: 'u-q', eventName: 'Second', eventData: {} }));
    for (const poll of await Promise.all(polls)) expect(poll.body.events.map((event) => event.trackID)).to.deep.equal([trackID]);
  });

  it('bounds a feed page in bytes: large events come a few at a time, the first always', async () => {
    const large = await app.account('Large');
    const sent: string[] = [];
    for (let i = 0; i < 6; i += 1) sent.push(queued(await app.ingest(large, 'events', { userId: 'u-big', eventName: 'Big', eventData: { text: `${i}`.repeat(400_000) } })));
    const fed: string[] = [];
    let after: string | undefined;
    for (let pages = 0; fed.length < sent.length && pages < 10; pages += 1) {
      const page = await feedOf(app, large, { limit: '1000', ...(after && { after }) });
      expect(page.body.events.length, 'events of about 400 KB in a page of about 1 MiB').to.be.within(1, 3);
      expect(JSON.stringify(page.body).length).to.be.below(1.5 * 1024 * 1024);
      fed.push(...page.body.events.map((event) => event.trackID));
      after = page.body.next ?? undefined;
    }
    expect(fed).to.deep.equal(sent);
  });

  it('refuses what it cannot take, naming the parameter; a token of another account gets nothing', async () => {
    const refusal = async (query: Record<string, string>): Promise<string> => {
      const reply = await exportOf(app, acme, query);
      expect(reply.status, JSON.stringify(query)).to.equal(400);
      expect(reply.headers['content-disposition']).to.equal(undefined);
      return (JSON.parse(reply.text) as { error: string }).error;
    };
    expect(await refusal({ format: 'xml' })).to.match(/^format must be/);
    expect(await refusal({ format: 'csv' })).to.match(/^kind is required with format=csv/);
    expect(await refusal({ format: 'parquet' })).to.match(/^kind is required with format=parquet/);
    expect(await refusal({ kind: 'people' })).to.match(/^kind must be/);
    expect(await refusal({ from: 'yesterday' })).to.match(/^from must be an ISO 8601/);
    expect(await refusal({ to: '2026-13-45' })).to.match(/^to must be/);
    expect(await refusal({ time: 'sent' })).to.match(/^time must be/);
    expect(await refusal({ after: 'bm90LWEtY3Vyc29y' })).to.match(/^after is not a cursor/);
    expect((await exportOf(app, acme, {}, { authorization: `Bearer ${globex.accessToken}` })).status).to.equal(401);
    expect((await feedOf(app, acme, { after: 'x' })).status).to.equal(400);
    const foreign = await app.get(`/admin/v1/accounts/${acme.licenseCode}/feed`, `Bearer ${globex.accessToken}`);
    expect(foreign.status).to.equal(401);
  });

  it('feeds the events in pages that join with no gap and no duplicate, and waits for the next when asked to', async () => {
    const { lines } = await fullExport();
    const fed: ExportLine[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await feedOf(app, acme, { limit: '3', ...(after && { after }) });
      expect(page.status).to.equal(200);
      expect(page.body.events.length).to.be.at.most(3);
      fed.push(...page.body.events);
      after = page.body.next ?? undefined;
      if (page.body.atEnd && page.body.events.length === 0) break;
    }
    expect(fed.map((line) => line.eventId)).to.deep.equal(lines.map((line) => line.eventId));
    const started = Date.now();
    const waiting = feedOf(app, acme, { after, wait: '10' });
    await new Promise((done) => setTimeout(done, 300));
    const trackID = queued(await app.ingest(acme, 'events', { userId: 'u-3', eventName: 'Late', eventData: {} }));
    const woken = await waiting;
    expect(woken.body.events.map((line) => line.trackID)).to.deep.equal([trackID]);
    expect(Date.now() - started).to.be.below(8_000);
    const empty = await feedOf(app, acme, { after: woken.body.next ?? undefined, wait: '1' });
    expect(empty.body).to.deep.include({ events: [], atEnd: true });
    expect(empty.body.next).to.equal(woken.body.next);
  });
});
