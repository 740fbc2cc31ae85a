import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { parsedBodyCost } from '../src/http/body-budget.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { until } from './support/eventually.js';
import { queued, requestError } from './support/replies.js';

/** An /events body of exactly `bytes` bytes. */
function eventBody(bytes: number): string {
  const shell = '{"userId":"u1","eventName":"big","eventData":{"text":""}}';
  return shell.replace('""', `"${'x'.repeat(bytes - shell.length)}"`);
}

interface HalfSent {
  req: ClientRequest;
  reply: Promise<{ status: number; text: string }>;
  /** Sends the rest of the body. */
  finish(): void;
}

describe('request bodies held at once are bounded in bytes of heap, fairly between accounts (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  const budget = 4_000_000;
  const size = 100_000;

  servedApp((started) => ({ app, account } = started), { config: { inflightBodyBytes: budget } });

  /** Starts an /events request that sends the first half of `body` and then nothing. */
  function halfSent(credentials: Credentials, body: string): HalfSent {
    const url = new URL(`${app.baseUrl}/v1/accounts/${credentials.licenseCode}/events`);
    const req = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${credentials.accessToken}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.on('response', (res: IncomingMessage) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
    });
    req.write(body.slice(0, body.length / 2));
    return { req, reply, finish: () => req.end(body.slice(body.length / 2)) };
  }

  async function bytesInFlight(): Promise<number> {
    const page = (await app.get<string>('/metrics')).body;
    return Number(/^tracking_http_body_bytes_in_flight (\d+)/m.exec(page)?.[1] ?? NaN);
  }

  async function untilInFlight(bytes: number): Promise<void> {
    let seen = NaN;
    await until(async () => (seen = await bytesInFlight()) === bytes, 5_000, () => `never ${bytes} bytes in flight, but ${seen}`);
  }

  it('holds the bytes of a body as they arrive, then what it costs parsed, and gives them back after the reply', async () => {
    const body = eventBody(size);
    const first = halfSent(account, body);
    // Declared 100 kB, sent 50 kB: what is held is what arrived.
    await untilInFlight(size / 2);
    first.finish();
    expect((await first.reply).status).to.equal(200);
    await untilInFlight(0);
  });

  it('refuses a body of an account past its quarter of the budget, once half is taken, with 503 before reading it, and lets other accounts in', async () => {
    const other = await app.account('other');
    const first = halfSent(account, eventBody(size));
    await untilInFlight(size / 2);
    const body = eventBody(2 * size);
    expect(size / 2 + parsedBodyCost(2 * size, 0)).to.be.above(budget / 2);

    // The same account would hold more than a quarter of the budget once this body is parsed.
    const refused = await app.ingest(account, 'events', undefined, { raw: body });
    expect(requestError(refused, 503)).to.match(/nothing was stored, retry/);
    expect(refused.headers.get('retry-after')).to.equal('1');
    // Another account holding nothing is not shut out.
    queued(await app.ingest(other, 'events', undefined, { raw: body }));

    first.finish();
    expect((await first.reply).status).to.equal(200);
    await untilInFlight(0);
    queued(await app.ingest(account, 'events', undefined, { raw: body }));
    expect((await app.events()).filter((event) => event.event_type === 'EventTracked')).to.have.length(3);
  });

  it('cuts a body that stops arriving with 408 within its next window of 5 s, giving back what it held', async () => {
    const stalled = halfSent(account, eventBody(size));
    await untilInFlight(size / 2);
    const reply = await stalled.reply;
    expect(reply.status).to.equal(408);
    expect(JSON.parse(reply.text)).to.deep.equal({ error: 'the body arrived slower than 240 bytes per second over 5 s: nothing was stored', code: 408 });
    await untilInFlight(0);
    expect(await app.events()).to.deep.equal([]);
  });

  it('counts the minimum data rate on the bytes sent, not on what they inflate to: a trickled gzip body gets 408', async () => {
    // About 1 kB of gzip that inflates to 1 MB: sent at 100 bytes a second, it inflates far faster than 240.
    const body = gzipSync(eventBody(1_000_000));
    expect(body.length).to.be.within(1_000, 3_000);
    const url = new URL(`${app.baseUrl}/v1/accounts/${account.licenseCode}/events`);
    const req = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length },
    });
    const reply = new Promise<number>((resolve, reject) => {
      req.on('response', (res: IncomingMessage) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent >= body.length) return;
      req.write(body.subarray(sent, sent + 50));
      sent += 50;
    }, 500);
    try {
      expect(await reply).to.equal(408);
    } finally {
      clearInterval(trickle);
      req.destroy();
    }
    expect(sent).to.be.below(body.length);
    await untilInFlight(0);
  });

  it('keeps a third account ingesting while two accounts each hold several slow bodies', async () => {
    const [attackerA, attackerB, bystander] = [account, await app.account('b'), await app.account('c')];
    // Each body is declared small enough to pass the check of its Content-Length, then stalls.
    const held = [attackerA, attackerA, attackerB, attackerB].map((credentials) => halfSent(credentials, eventBody(80_000)));
    await untilInFlight(4 * 40_000);
    // An attacker holding requests gets no more than its quarter of the budget once half is taken...
    expect(requestError(await app.ingest(attackerA, 'events', undefined, { raw: eventBody(2 * size) }), 503)).to.match(/retry/);
    // ...while an account holding nothing gets in, and its body is stored.
    queued(await app.ingest(bystander, 'events', undefined, { raw: eventBody(2 * size) }));
    // The attackers' bodies stop arriving: cut after their 5 s, and their reservations are gone.
    for (const { reply } of held) expect((await reply).status).to.equal(408);
    await untilInFlight(0);
    expect((await app.events()).map((event) => event.metadata.accountId)).to.have.length(1);
  });

  it('always lets a body in when nothing is held, however large it is parsed', async () => {
    const users = Array.from({ length: 3 }, (_, i) => ({ userId: `u${i}`, attributes: { note: 'x'.repeat(800_000) } }));
    expect(parsedBodyCost(2_400_000, 0)).to.be.above(budget);
    expect((await app.ingest(account, 'users/bulk', users)).status).to.equal(200);
  });
});
