import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { queued, requestError } from './support/replies.js';

/** An /events body of exactly `bytes` bytes. */
function eventBody(bytes: number): string {
  const shell = '{"userId":"u1","eventName":"big","eventData":{"text":""}}';
  return shell.replace('""', `"${'x'.repeat(bytes - shell.length)}"`);
}

describe('request bodies held at once are bounded in bytes (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  const budget = 2_000_000;
  const size = 900_000;

  servedApp((started) => ({ app, account } = started), { config: { inflightBodyBytes: budget } });

  /** Starts an /events request whose body stops halfway: it holds its reservation until finished. */
  function halfSent(credentials: Credentials, body: string): { req: ClientRequest; reply: Promise<{ status: number; text: string }> } {
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
    return { req, reply };
  }

  async function bytesInFlight(): Promise<number> {
    const page = (await app.get<string>('/metrics')).body;
    return Number(/^tracking_http_body_bytes_in_flight (\d+)/m.exec(page)?.[1] ?? NaN);
  }

  async function untilInFlight(bytes: number): Promise<void> {
    for (let tries = 0; (await bytesInFlight()) !== bytes; tries += 1) {
      if (tries > 500) throw new Error(`never ${bytes} bytes in flight`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('refuses a body past an account half of the budget with 503 and Retry-After, lets another account in, and takes the body once it has room', async () => {
    const other = await app.account('other');
    const body = eventBody(size);
    const first = halfSent(account, body);
    await untilInFlight(size);

    // The same account would hold more than half the budget: refused before its body is read.
    const refused = await app.ingest(account, 'events', undefined, { raw: body });
    expect(requestError(refused, 503)).to.match(/nothing was stored, retry/);
    expect(refused.headers.get('retry-after')).to.equal('1');

    // Another account is not shut out by the first one's request.
    queued(await app.ingest(other, 'events', undefined, { raw: body }));

    first.req.end(body.slice(body.length / 2));
    expect((await first.reply).status).to.equal(200);
    await untilInFlight(0);
    queued(await app.ingest(account, 'events', undefined, { raw: body }));
    expect((await app.events()).filter((event) => event.event_type === 'EventTracked')).to.have.length(3);
  });

  it('refuses any account once the whole budget is held, and always lets a body in when nothing is held', async () => {
    const accounts = [account, await app.account('b'), await app.account('c')];
    const body = eventBody(size);
    const held = [halfSent(accounts[0] as Credentials, body), halfSent(accounts[1] as Credentials, body)];
    await untilInFlight(2 * size);
    expect(requestError(await app.ingest(accounts[2] as Credentials, 'events', undefined, { raw: body }), 503)).to.match(/retry/);
    for (const { req } of held) req.end(body.slice(body.length / 2));
    for (const { reply } of held) expect((await reply).status).to.equal(200);
    await untilInFlight(0);
    // A bulk body larger than the whole budget still gets in when it is alone.
    const users = Array.from({ length: 3 }, (_, i) => ({ userId: `u${i}`, attributes: { note: 'x'.repeat(800_000) } }));
    expect((await app.ingest(account, 'users/bulk', users)).status).to.equal(200);
  });
});
