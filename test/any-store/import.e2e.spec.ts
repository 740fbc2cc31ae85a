import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImportSummary } from '../../src/cli/import-progress.js';
import type { Rejection } from '../../src/cli/import-rejects.js';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { trackingImport, type CliResult } from '../support/cli.js';

interface Lead {
  userId: string;
  firstName: string | null;
  email: string | null;
  children: number | null;
  opt_in_sms: boolean;
  attributes: Record<string, unknown>;
  attributeTypes: Record<string, string>;
}

interface TrackLookup {
  events: { type: string; data: Record<string, unknown> }[];
}

/** `tracking import`, run as a user runs it, against a running service. */
describe('tracking import (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  let dir: string;
  servedApp((started) => ({ app, account } = started), { projections: true });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-e2e-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const bearer = (): string => `Bearer ${account.accessToken}`;

  async function input(name: string, lines: string[]): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `${lines.join('\n')}\n`);
    return path;
  }

  /** Runs the import with --json; returns its summary and exit code. */
  async function importJson(kind: string, file: string): Promise<{ result: CliResult; summary: ImportSummary }> {
    const result = await trackingImport(app, account, 'import', kind, file, '--json');
    expect(result.stdout, result.stderr).to.match(/^\{/);
    return { result, summary: JSON.parse(result.stdout) as ImportSummary };
  }

  async function rejections(file: string): Promise<Rejection[]> {
    const text = await readFile(`${file}.rejected.ndjson`, 'utf8');
    return text.trim().split('\n').map((line) => JSON.parse(line) as Rejection);
  }

  async function lead(id: string): Promise<Lead> {
    await app.projected();
    const reply = await app.get<Lead>(`/admin/v1/accounts/${account.licenseCode}/leads/${id}`, bearer());
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body;
  }

  /** The stored data of the items of `kind` that live events lists, oldest first. */
  async function storedOf(kind: string): Promise<Record<string, unknown>[]> {
    await app.projected();
    const page = await app.get<{ items: { trackID: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/live?kind=${kind}&limit=200`, bearer());
    expect(page.status).to.equal(200);
    const data = [];
    for (const item of [...page.body.items].reverse()) {
      const lookup = await app.get<TrackLookup>(`/admin/v1/accounts/${account.licenseCode}/track/${item.trackID}`, bearer());
      data.push(lookup.body.events[0]?.data ?? {});
    }
    return data;
  }

  it('imports users from a CSV whose leads then show typed attributes; rejected rows go to a file with line and reason; a second run stores nothing new and says so', async () => {
    const file = await input('users.csv', [
      'userId,firstName,email,children,opt_in_sms,attributes.plan,attributes.visits,attributes.vip,attributes.last_login,attributes.zip:string',
      'u-1,Ann,ann@example.com,2,false,gold,17,true,2024-05-01T12:30:00Z,01234',
      'u-2,"Smith, Bob",,,,silver,3,false,,',
      'u-3,Cy,cy@example.com,two,,,,,,',
      '',
      'u-4,Di,,,,bronze,many,,,',
      'u-5,Ed,,,,,,,,',
    ]);
    const first = await importJson('users', file);
    expect(first.result.code).to.equal(1);
    expect(first.summary).to.include({ read: 5, accepted: 3, alreadyStored: 0, rejected: 2, failed: 0, rejectedFile: `${file}.rejected.ndjson` });

    const ann = await lead('u-1');
    expect(ann).to.include({ firstName: 'Ann', email: 'ann@example.com', children: 2, opt_in_sms: false });
    expect(ann.attributes).to.deep.equal({ plan: 'gold', visits: 17, vip: true, last_login: '2024-05-01T12:30:00.000000Z', zip: '01234' });
    expect(ann.attributeTypes).to.deep.equal({ plan: 'string', visits: 'number', vip: 'boolean', last_login: 'datetime', zip: 'string' });
    expect((await lead('u-2')).firstName).to.equal('Smith, Bob');
    expect((await lead('u-5')).attributes).to.deep.equal({});

    const rejected = await rejections(file);
    expect(rejected.map((r) => r.line)).to.deep.equal([4, 6]);
    expect(rejected[0]).to.deep.include({ message: "children: 'two' is not an integer", input: 'u-3,Cy,cy@example.com,two,,,,,,' });
    expect(rejected[1]?.message).to.contain('visits');
    expect(rejected[1]?.item).to.deep.equal({ userId: 'u-4', firstName: 'Di', attributes: { plan: 'bronze', visits: 'many' } });

    const stored = (await app.events()).length;
    const second = await importJson('users', file);
    expect(second.summary).to.include({ read: 5, accepted: 0, alreadyStored: 3, rejected: 2 });
    expect(await app.events()).to.have.length(stored);
  });

  it('imports users from NDJSON, skipping blank lines and rejecting what is not an item, and prints a plain summary', async () => {
    const file = await input('users.ndjson', [
      JSON.stringify({ userId: 'n-1', firstName: 'Nia', attributes: { score: 4.5 } }),
      '',
      '{"userId": "n-2", ',
      JSON.stringify({ anonymousId: 'anon-9', attributes: {} }),
      JSON.stringify({ userId: 'n-3' }),
    ]);
    const result = await trackingImport(app, account, 'import', 'users', file);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.match(/^users from .*users\.ndjson: 4 read, 2 newly accepted, 0 already stored, 2 rejected in [\d.]+ s \(\d+ items\/s\)\n/);
    expect(result.stdout).to.contain(`rejected lines and why: ${file}.rejected.ndjson`);
    expect(result.stderr).to.equal('');
    expect((await lead('n-1')).attributes).to.deep.equal({ score: 4.5 });
    expect((await lead('anon-9')).attributes).to.deep.equal({});
    const rejected = await rejections(file);
    expect(rejected.map((r) => `${r.line} ${r.message.split(':')[0]}`)).to.deep.equal(['3 not valid JSON', `5 ${rejected[1]?.message.split(':')[0]}`]);
    expect(rejected[1]?.message).to.contain('attributes');
  });

  it('imports events from CSV and NDJSON into the timeline of their users', async () => {
    expect((await importJson('users', await input('user.csv', ['userId', 'e-1']))).summary).to.include({ accepted: 1 });
    const csv = await input('events.csv', ['userId,eventName,eventTime,eventData.amount,eventData.coupon,eventData.cart.items', 'e-1,purchase,2024-05-01T10:00:00,9.99,SPRING,3']);
    const ndjson = await input('events.jsonl', [JSON.stringify({ userId: 'e-1', eventName: 'refund', eventData: { amount: 9.99 } })]);
    expect((await importJson('events', csv)).summary).to.include({ accepted: 1, rejected: 0 });
    expect((await importJson('events', ndjson)).summary).to.include({ accepted: 1, rejected: 0 });
    await app.projected();
    const reply = await app.get<{ events: { eventName: string; eventData: unknown }[] }>(`/admin/v1/accounts/${account.licenseCode}/leads/e-1/events`, bearer());
    expect(reply.body.events.map((e) => [e.eventName, e.eventData])).to.deep.equal([
      ['refund', { amount: 9.99 }],
      ['purchase', { amount: 9.99, coupon: 'SPRING', cart: { items: 3 } }],
    ]);
  });

  it('imports products and product events from CSV and NDJSON, stored as sent', async () => {
    const products = await input('products.csv', ['productId,userId,properties.name,properties.price,properties.in_stock', 'p-1,,Shoe,49.5,true', 'p-2,u-1,Hat,,']);
    const productsNd = await input('products.ndjson', [JSON.stringify({ productId: 'p-3', properties: { tags: ['a', 'b'] } })]);
    expect((await importJson('products', products)).summary).to.include({ accepted: 2, rejected: 0 });
    expect((await importJson('products', productsNd)).summary).to.include({ accepted: 1, rejected: 0 });
    expect(await storedOf('products')).to.deep.equal([
      { productId: 'p-1', properties: { name: 'Shoe', price: 49.5, in_stock: true } },
      { productId: 'p-2', userId: 'u-1', properties: { name: 'Hat' } },
      { productId: 'p-3', properties: { tags: ['a', 'b'] } },
    ]);

    const events = await input('pe.csv', ['productId,userId,eventName,eventData.qty', 'p-1,u-1,view,1', ',u-1,view,2']);
    const eventsNd = await input('pe.ndjson', [JSON.stringify({ productId: 'p-2', userId: null, eventName: 'cart', eventData: { qty: 2 } })]);
    const csvRun = await importJson('productsevents', events);
    expect(csvRun.summary).to.include({ accepted: 1, rejected: 1 });
    expect((await rejections(events))[0]).to.deep.include({ line: 3 });
    expect((await importJson('productsevents', eventsNd)).summary).to.include({ accepted: 1, rejected: 0 });
    const stored = await storedOf('productsevents');
    expect(stored.map((d) => [d.productId, d.eventName, d.eventData])).to.deep.equal([
      ['p-1', 'view', { qty: 1 }],
      ['p-2', 'cart', { qty: 2 }],
    ]);
  });

  it('sends a larger file in batches and, run again, replays every batch: every item reported already stored, nothing stored twice', async () => {
    const lines = Array.from({ length: 250 }, (_, i) => JSON.stringify({ userId: `b-${i % 40}`, eventName: 'tick', eventData: { n: i } }));
    const file = await input('ticks.ndjson', lines);
    const first = await importJson('events', file);
    expect(first.result.code).to.equal(0);
    expect(first.summary).to.include({ read: 250, accepted: 250, alreadyStored: 0, rejected: 0, rejectedFile: null });
    const stored = (await app.events()).filter((e) => e.event_type === 'EventTracked');
    expect(stored).to.have.length(250);
    const second = await importJson('events', file);
    expect(second.result.code).to.equal(0);
    expect(second.summary).to.include({ read: 250, accepted: 0, alreadyStored: 250, rejected: 0 });
    const plain = await trackingImport(app, account, 'import', 'events', file);
    expect(plain.code).to.equal(0);
    expect(plain.stdout).to.match(/^events from .*ticks\.ndjson: 250 read, 0 newly accepted, 250 already stored, 0 rejected in /);
    expect((await app.events()).filter((e) => e.event_type === 'EventTracked')).to.have.length(250);
    await stat(`${file}.rejected.ndjson`).then(
      () => expect.fail('a rejected-lines file was made with nothing rejected'),
      () => undefined,
    );
  });

  it('keeps a CR, and the CR of a CRLF, inside a quoted CSV field as data in the stored item', async () => {
    const path = join(dir, 'notes.csv');
    await writeFile(path, 'userId,firstName,attributes.note\r\nr-1,"Ann\rMarie","first\r\nsecond"\r\nr-2,Bo,plain\r\n');
    expect((await importJson('users', path)).summary).to.include({ read: 2, accepted: 2, rejected: 0 });
    const ann = await lead('r-1');
    expect(ann.firstName).to.equal('Ann\rMarie');
    expect(ann.attributes).to.deep.equal({ note: 'first\r\nsecond' });
    expect((await lead('r-2')).attributes).to.deep.equal({ note: 'plain' });
  });

  it('stops at a quote left open past 1 MiB, naming the file and the line it opened on: the rows before it are stored, nothing after it', async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) => `q-${i},Name number ${i}`);
    const file = await input('open.csv', ['userId,firstName', 'q-a,Ann', 'q-b,"Bo', ...rows]);
    const { result, summary } = await importJson('users', file);
    expect(result.code).to.equal(1);
    expect(summary).to.include({ read: 1, accepted: 1, rejected: 0, failed: 0 });
    expect(summary.stoppedEarly).to.equal(`${file}: a quoted field opened on line 3 is not closed within 1048576 bytes; nothing from line 3 on is imported`);
    const plain = await trackingImport(app, account, 'import', 'users', file);
    expect(plain.stdout).to.contain(`stopped early: ${file}: a quoted field opened on line 3`);
    expect((await lead('q-a')).firstName).to.equal('Ann');
    for (const id of ['q-b', 'q-0', 'q-59999']) {
      expect((await app.get(`/admin/v1/accounts/${account.licenseCode}/leads/${id}`, bearer())).status, id).to.equal(404);
    }
  });

  it('stores every line once when a copy cut inside a batch is imported twice, then the whole file', async () => {
    const lines = Array.from({ length: 250 }, (_, i) => JSON.stringify({ userId: `t-${i % 40}`, eventName: 'tick', eventData: { n: i } }));
    const whole = await input('ticks.ndjson', lines);
    // Cut inside line 231: 30 lines into the third batch, the last line half written.
    const cut = join(dir, 'ticks-cut.ndjson');
    await writeFile(cut, `${lines.slice(0, 230).join('\n')}\n${lines[230]?.slice(0, 20) ?? ''}`);
    const ticks = async (): Promise<number[]> =>
      (await app.events())
        .filter((e) => e.event_type === 'EventTracked')
        .map((e) => Number((e.data as { eventData: { n: number } }).eventData.n))
        .sort((a, b) => a - b);
    const first = await importJson('events', cut);
    expect(first.summary).to.include({ read: 231, accepted: 230, alreadyStored: 0, rejected: 1 });
    expect(await ticks()).to.deep.equal(Array.from({ length: 230 }, (_, i) => i));
    const again = await importJson('events', cut);
    expect(again.summary).to.include({ read: 231, accepted: 0, alreadyStored: 230, rejected: 1 });
    expect(await ticks()).to.have.length(230);
    const full = await importJson('events', whole);
    // The copy's lines are found under their keys (replayed); only the 20 it lacked are new.
    expect(full.summary).to.include({ read: 250, accepted: 20, alreadyStored: 230, rejected: 0, failed: 0 });
    expect(await ticks()).to.deep.equal(Array.from({ length: 250 }, (_, i) => i));
    const trackIds = (await app.events()).filter((e) => e.event_type === 'EventTracked').map((e) => e.metadata.trackId);
    expect(new Set(trackIds).size).to.equal(250);
  });

  it('refuses a CSV header that names no field, and a missing token, before sending anything', async () => {
    const file = await input('bad.csv', ['userId,plan', 'u-1,gold']);
    const header = await trackingImport(app, account, 'import', 'users', file);
    expect(header.code).to.equal(2);
    expect(header.stderr).to.contain("column 2 ('plan') is not a field of users").and.contain('attributes.<key>');
    const noToken = await trackingImport(app, { ...account, accessToken: '' }, 'import', 'users', file);
    expect(noToken.code).to.equal(2);
    expect(noToken.stderr).to.contain('pass --token or set TRACKING_ACCESS_TOKEN');
    expect(await app.events()).to.have.length(0);
  });

  it('stops at the first batch the service refuses whole (a wrong token), saying why, and counts every line sent as failed', async () => {
    const file = await input('users.ndjson', Array.from({ length: 250 }, (_, i) => JSON.stringify({ userId: `w-${i}`, attributes: {} })));
    const result = await trackingImport(app, { ...account, accessToken: 'wrong-token' }, 'import', 'users', file);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.match(/: \d+ read, 0 newly accepted, 0 already stored, 0 rejected, \d+ failed in /).and.contain('stopped early: users batch refused by the service').and.contain('HTTP 401');
    const read = Number(/: (\d+) read/.exec(result.stdout)?.[1]);
    const failed = await rejections(file);
    expect(failed).to.have.length(read);
    expect(failed[0]?.message).to.contain('HTTP 401');
    expect(await app.events()).to.have.length(0);
  });
});

