import { request as httpRequest, type ClientRequest } from 'node:http';
import { brotliCompressSync, constants as zlibConstants, deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { bulkBytes, singleItemBytes } from '../src/http/body.js';
import { servedApp, type Credentials, type PostOptions, type Reply, type TestApp } from './support/app.js';
import { eventually, until } from './support/eventually.js';
import { bulkResults, itemError, queued, requestError, storesNothing } from './support/replies.js';

/** Compressed request bodies (docs/api.md, Compressed bodies): Content-Encoding gzip, deflate and br. */

const compressors: Record<string, (bytes: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

const compressed = (encoding: string, body: unknown): PostOptions => ({
  raw: (compressors[encoding] as (bytes: Buffer) => Buffer)(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))),
  headers: { 'content-encoding': encoding },
});

/** JSON text of exactly `bytes` bytes: `json` padded with spaces, which JSON allows and gzip shrinks to nothing. */
const padded = (json: string, bytes: number): string => json + ' '.repeat(bytes - Buffer.byteLength(json));

const oneItemOfEachKind: Record<string, unknown> = {
  users: { userId: 'u1', firstName: 'Ann', attributes: { level: 'gold' } },
  events: { userId: 'u1', eventName: 'signup', eventData: { plan: 'pro' } },
  products: { productId: 'p1', properties: { colour: 'red' } },
  productsevents: { productId: 'p1', userId: null, eventName: 'view', eventData: { page: 2 } },
};

async function bytesInFlight(app: TestApp): Promise<number> {
  const page = (await app.get<string>('/metrics')).body;
  return Number(/^tracking_http_body_bytes_in_flight (\d+)/m.exec(page)?.[1] ?? NaN);
}

async function untilInFlight(app: TestApp, bytes: number): Promise<void> {
  let seen = NaN;
  await until(async () => (seen = await bytesInFlight(app)) === bytes, 5_000, () => `never ${bytes} bytes in flight, but ${seen}`);
}

describe('compressed request bodies (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started));

  it('stores a gzip body on every ingest endpoint, single and bulk, as the same body sent plain', async () => {
    for (const [kind, item] of Object.entries(oneItemOfEachKind)) {
      queued(await app.ingest(account, kind, undefined, compressed('gzip', item)));
      const results = bulkResults(await app.ingest(account, `${kind}/bulk`, undefined, compressed('gzip', [item, item])));
      expect(results.map((result) => result.status), kind).to.deep.equal(['queued', 'queued']);
    }
    queued(await app.ingest(account, 'events', oneItemOfEachKind.events));
    const tracked = (await app.events()).filter((event) => event.event_type === 'EventTracked');
    expect(tracked).to.have.length(4);
    // The first came gzip, the last plain; eventTimeUtc is each one's receipt.
    const sent = (data: Record<string, unknown> | undefined) => ({ ...data, eventTimeUtc: undefined });
    expect(sent(tracked[0]?.data)).to.deep.equal(sent(tracked[3]?.data));
  });

  it('reads deflate and br bodies as well, and takes identity (or an empty header) as no encoding', async () => {
    for (const encoding of ['deflate', 'br', 'GZIP']) {
      queued(await app.ingest(account, 'events', undefined, compressed(encoding.toLowerCase(), oneItemOfEachKind.events)));
    }
    for (const encoding of ['identity', '']) {
      queued(await app.ingest(account, 'events', oneItemOfEachKind.events, { headers: { 'content-encoding': encoding } }));
    }
  });

  it('answers any other Content-Encoding with 415 form A naming the accepted ones, and stores nothing', async () => {
    await storesNothing(app, async () => {
      for (const encoding of ['zstd', 'compress', 'x-gzip', 'gzip, br', 'gzip, gzip']) {
        for (const [endpoint, body] of [['events', oneItemOfEachKind.events], ['events/bulk', [oneItemOfEachKind.events]]] as const) {
          const refused = await app.ingest(account, endpoint, undefined, { ...compressed('gzip', body), headers: { 'content-encoding': encoding } });
          expect(requestError(refused, 415), `${endpoint} ${encoding}`).to.equal('Content-Encoding must be one of identity, gzip, deflate, br');
        }
      }
    });
  });

  it('applies the 1 MiB and 5 MiB limits to the decompressed bytes, whatever the compressed size', async () => {
    const event = JSON.stringify(oneItemOfEachKind.events);
    const single = (bytes: number) => app.ingest(account, 'events', undefined, compressed('gzip', padded(event, bytes)));
    const bulk = (bytes: number) => app.ingest(account, 'events/bulk', undefined, compressed('gzip', padded(`[${event}]`, bytes)));
    expect(gzipSync(padded(event, singleItemBytes + 1)).length).to.be.below(10_000);

    queued(await single(singleItemBytes));
    expect(requestError(await single(singleItemBytes + 1), 413)).to.equal('body is larger than 1mb once decompressed');
    expect(bulkResults(await bulk(bulkBytes))).to.have.length(1);
    expect(requestError(await bulk(bulkBytes + 1), 413)).to.equal('body is larger than 5mb once decompressed');
  });

  it('refuses a gzip bomb of 1 GiB with 413 as soon as it inflates past the limit, and goes on serving', async () => {
    // Concatenated gzip members are one gzip stream: 16 × 64 MiB of spaces in about 1 MB.
    const member = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
    expect(bomb.length).to.be.below(2 * 1024 * 1024);
    for (const endpoint of ['events', 'events/bulk']) {
      const reply = await app.ingest(account, endpoint, undefined, { raw: bomb, headers: { 'content-encoding': 'gzip' } });
      expect(requestError(reply, 413), endpoint).to.match(/^body is larger than \dmb once decompressed$/);
    }
    queued(await app.ingest(account, 'events', undefined, compressed('gzip', oneItemOfEachKind.events)));
  });

  it('stops inflating a small brotli body of 256 MiB once it passes the limit: after the 413, no CPU goes on it', async () => {
    // Brotli shrinks 256 MiB of zeros to under 1 kB; inflating all of it takes the machine seconds.
    const bomb = brotliCompressSync(Buffer.alloc(256 * 1024 * 1024), { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } });
    expect(bomb.length).to.be.below(2_000);
    const cpuBefore = process.cpuUsage();
    const reply = await app.ingest(account, 'events/bulk', undefined, { raw: bomb, headers: { 'content-encoding': 'br' } });
    expect(requestError(reply, 413)).to.equal('body is larger than 5mb once decompressed');
    // The service runs in this process: its CPU is this process's. Inflating 5 MiB takes a few
    // milliseconds; an inflater left running would take over a second of the next one.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const { user, system } = process.cpuUsage(cpuBefore);
    expect((user + system) / 1e6, 'CPU seconds of this process from the request to a second after its reply').to.be.below(0.5);
  });

  it('answers a corrupt or truncated compressed body with 400 form A naming the problem, and stores nothing', async () => {
    const whole = gzipSync(JSON.stringify(oneItemOfEachKind.events));
    const cases: [string, Buffer, string][] = [
      ['gzip', Buffer.from('{"userId":"u1","eventName":"not compressed"}'), 'body is not valid gzip data (Content-Encoding: gzip): incorrect header check'],
      ['gzip', whole.subarray(0, whole.length - 12), 'body is not valid gzip data (Content-Encoding: gzip): unexpected end of file'],
      ['deflate', Buffer.from('not deflate'), 'body is not valid deflate data (Content-Encoding: deflate): incorrect header check'],
    ];
    await storesNothing(app, async () => {
      for (const [encoding, raw, message] of cases) {
        expect(requestError(await app.ingest(account, 'events', undefined, { raw, headers: { 'content-encoding': encoding } }), 400)).to.equal(message);
      }
      const notBrotli = await app.ingest(account, 'events/bulk', undefined, { raw: Buffer.from('\u00ff\u00ff not brotli'), headers: { 'content-encoding': 'br' } });
      expect(requestError(notBrotli, 400)).to.match(/^body is not valid br data \(Content-Encoding: br\): \S/);
    });
  });

  it('keeps the decompressed text as the body excerpt of a refused compressed item', async () => {
    const body = JSON.stringify({ userId: 'u1', eventData: { why: 'no eventName' } });
    expect(itemError(await app.ingest(account, 'events', undefined, compressed('gzip', body)))).to.contain('eventName');
    expect(requestError(await app.ingest(account, 'events', undefined, compressed('gzip', '{"userId":')), 400)).to.equal('body is not valid JSON');
    const path = `/admin/v1/accounts/${account.licenseCode}/warnings/recent`;
    type Warnings = { warnings: { excerpt: string | null; reason: string }[] };
    let last: Reply<Warnings> | undefined;
    const reply = await eventually(
      async () => {
        last = await app.get<Warnings>(path, `Bearer ${account.accessToken}`);
        return last.body.warnings.length === 2 && last;
      },
      10_000,
      () => `never 2 recent warnings, but ${JSON.stringify(last?.body)}`,
    );
    expect(reply.body.warnings.map((w) => [w.reason, w.excerpt])).to.have.deep.members([
      ['schema', body],
      ['malformed_json', '{"userId":'],
    ]);
  });

  it('takes a compressed repeat of a plain request under the same Idempotency-Key as the same body', async () => {
    const headers = { 'idempotency-key': 'batch-1' };
    const first = queued(await app.ingest(account, 'events', oneItemOfEachKind.events, { headers }));
    const again = await app.ingest(account, 'events', undefined, { ...compressed('gzip', oneItemOfEachKind.events), headers: { ...headers, 'content-encoding': 'gzip' } });
    expect(queued(again)).to.equal(first);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
  });
});

describe('compressed request bodies and the body budget (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  const budget = 3 * 1024 * 1024;
  servedApp((started) => ({ app, account } = started), { config: { inflightBodyBytes: budget } });

  /** Starts a gzip /events request that stops halfway through its (small) body. */
  function halfSent(body: Buffer): { req: ClientRequest; reply: Promise<number> } {
    const url = new URL(`${app.baseUrl}/v1/accounts/${account.licenseCode}/events`);
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.accessToken}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': body.length,
      },
    });
    const reply = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    req.write(body.subarray(0, body.length / 2));
    return { req, reply };
  }

  /** The bytes in flight, once `accept` holds of them; they are returned. */
  async function untilInFlightIs(accept: (bytes: number) => boolean): Promise<number> {
    let seen = NaN;
    return eventually(
      async () => {
        seen = await bytesInFlight(app);
        return accept(seen) && seen;
      },
      5_000,
      () => `bytes in flight never as expected, last ${seen}`,
    );
  }

  it('reserves what a compressed body inflates to as it arrives, not its Content-Length nor the route limit, and gives it back after the reply', async () => {
    const event = { userId: 'u1', eventName: 'note', eventData: { text: 'x'.repeat(600_000) } };
    const body = gzipSync(JSON.stringify(event));
    expect(body.length).to.be.below(2_000);
    const first = halfSent(body);
    // Half the gzip stream inflates to a good part of the 600 kB: that is what is held.
    const held = await untilInFlightIs((bytes) => bytes > 10 * body.length);
    expect(held).to.be.below(singleItemBytes);
    first.req.end(body.subarray(body.length / 2));
    expect(await first.reply).to.equal(200);
    await untilInFlight(app, 0);
  });

  it('refuses a small compressed body with 503 once what it inflates to would pass the budget, and stores nothing', async () => {
    const held = halfSent(gzipSync(JSON.stringify({ userId: 'u1', eventName: 'note', eventData: { text: 'y'.repeat(600_000) } })));
    await untilInFlightIs((bytes) => bytes > 0);
    const other = await app.account('other');
    // Parsed, 900 kB would cost the heap several times the 3 MiB budget: not while anything else is held.
    const bomb = gzipSync(JSON.stringify({ userId: 'u2', eventName: 'bomb', eventData: { text: 'z'.repeat(900_000) } }));
    const refused = await app.ingest(other, 'events', undefined, { raw: bomb, headers: { 'content-encoding': 'gzip' } });
    expect(requestError(refused, 503)).to.match(/nothing was stored, retry/);
    expect(refused.headers.get('retry-after')).to.equal('1');
    held.reply.catch(() => {});
    held.req.destroy();
    await untilInFlight(app, 0);
    // Alone, the same body gets in.
    queued(await app.ingest(other, 'events', undefined, { raw: bomb, headers: { 'content-encoding': 'gzip' } }));
    expect((await app.events()).map((event) => (event.data as { eventName: string }).eventName)).to.deep.equal(['bomb']);
  });
});
