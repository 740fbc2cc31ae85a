import { expect } from 'chai';
import { maxNestingDepth } from '../src/ingest/nesting.js';
import { servedApp, TestApp, type Credentials, type Reply } from './support/app.js';
import { bulkResults, itemError, queued, requestError, storesNothing } from './support/replies.js';

/** `levels` objects nested in one another, `{ a: { a: ... {} } }`: `{}` is one level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) value = { a: value };
  return value;
}

/** The same as JSON text, built without recursion (JSON.stringify would overflow the stack). */
const nestedText = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

const tooDeep = `is nested too deep: an item may nest objects and arrays at most ${maxNestingDepth} levels`;

describe('hostile input: deep nesting, bytes that are not UTF-8, integers a double cannot keep (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  /** POSTs raw bytes to an ingest endpoint. */
  async function postBytes(endpoint: string, body: Buffer, contentType = 'application/json'): Promise<Reply> {
    const response = await fetch(`${app.baseUrl}/v1/accounts/${account.licenseCode}/${endpoint}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': contentType },
      body,
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as unknown, headers: response.headers };
  }

  describe(`nesting (at most ${maxNestingDepth} levels an item)`, () => {
    it('answers 10,000 levels with 400 form A naming the field, with or without an Idempotency-Key', async () => {
      const raw = `{"userId":"u1","eventName":"deep","eventData":${nestedText(10_000)}}`;
      // eventData is level 2: the object at level 65 is 63 keys below it.
      const path = `eventData${'.a'.repeat(maxNestingDepth - 1)}`;
      for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
        const reply = await storesNothing(app, () => app.ingest(account, 'events', {}, { raw, headers }));
        expect(requestError(reply, 400)).to.equal(`${path} ${tooDeep}`);
      }
    });

    it(`accepts an item of exactly ${maxNestingDepth} levels and refuses one of ${maxNestingDepth + 1}`, async () => {
      // The item is level 1 and eventData level 2.
      const deepest = { userId: 'u1', eventName: 'deep', eventData: nested(maxNestingDepth - 1) };
      const trackID = queued(await app.ingest(account, 'events', deepest));
      const [stored] = await app.events();
      expect(stored?.event_id).to.equal(trackID);
      expect(stored?.data.eventData).to.deep.equal(deepest.eventData);
      const over = await storesNothing(app, () =>
        app.ingest(account, 'products', { productId: 'p1', properties: { list: [nested(maxNestingDepth - 2)] } }),
      );
      expect(requestError(over, 400)).to.equal(`properties.list[0]${'.a'.repeat(maxNestingDepth - 3)} ${tooDeep}`);
    });

    it('refuses a bulk request with a too deep element as a whole (form A naming the element), before its Idempotency-Key is used', async () => {
      const raw = `[{"userId":"u1","attributes":{}},{"userId":"u2","attributes":${nestedText(10_000)}}]`;
      const reply = await storesNothing(app, () => app.ingest(account, 'users/bulk', {}, { raw, headers: { 'idempotency-key': 'bulk-1' } }));
      expect(requestError(reply, 400)).to.equal(`[1].attributes${'.a'.repeat(maxNestingDepth - 1)} ${tooDeep}`);
      // The key was never bound to the refused body: a corrected request may use it.
      const results = bulkResults(await app.ingest(account, 'users/bulk', [{ userId: 'u1', attributes: {} }], { headers: { 'idempotency-key': 'bulk-1' } }));
      expect(results.map((r) => r.status)).to.deep.equal(['queued']);
    });

    it('does not count the array of a bulk request: an element may nest as deep as a single item', async () => {
      const results = bulkResults(
        await app.ingest(account, 'users/bulk', [
          { userId: 'u1', attributes: {} },
          { userId: 'u2', attributes: { deep: nested(maxNestingDepth - 2) } },
        ]),
      );
      expect(results[0]?.status).to.equal('queued');
      expect(results[1]).to.deep.equal({ status: 'error', message: 'attributes.deep must be a string, a number or a boolean' });
    });
  });

  describe('bytes that are not UTF-8', () => {
    const before = Buffer.from('{"userId":"u1","eventName":"x","eventData":{"text":"a');
    const after = Buffer.from('b"}}');
    for (const bytes of ['c0af', 'eda080', 'ff']) {
      it(`refuses a body with the bytes ${bytes.toUpperCase()} with 400 form A, storing nothing`, async () => {
        const body = Buffer.concat([before, Buffer.from(bytes, 'hex'), after]);
        const reply = await storesNothing(app, () => postBytes('events', body));
        expect(requestError(reply, 400)).to.equal('body is not valid UTF-8');
      });
    }

    it('keeps valid UTF-8 exactly, and reads a body that starts with a byte order mark', async () => {
      const text = 'é ß 日本 😀';
      queued(await postBytes('events', Buffer.concat([before, Buffer.from(text), after])));
      queued(await postBytes('events', Buffer.concat([Buffer.from('efbbbf', 'hex'), before, after])));
      expect((await app.events()).map((e) => e.data.eventData)).to.deep.equal([{ text: `a${text}b` }, { text: 'ab' }]);
    });

    it('refuses another declared charset with 415', async () => {
      const reply = await storesNothing(app, () => postBytes('events', Buffer.from('{"userId":"u1","eventName":"x"}', 'utf16le'), 'application/json; charset=utf-16le'));
      expect(requestError(reply, 415)).to.equal('body must be UTF-8 JSON');
    });
  });

  describe('numbers beyond ±(2^53 − 1)', () => {
    const limit = Number.MAX_SAFE_INTEGER;
    const refusal = (field: string): string => `${field} is an integer beyond -${limit}..${limit}, which cannot be kept exactly (send it as a string)`;

    it('refuses integer literals a double would round, naming the field, at any depth', async () => {
      const cases: [string, string, string][] = [
        ['events', '{"userId":"u1","eventName":"x","eventData":{"n":9007199254740993}}', 'eventData.n'],
        ['events', '{"userId":"u1","eventName":"x","eventData":{"n":-9007199254740993}}', 'eventData.n'],
        ['events', '{"userId":"u1","eventName":"x","eventData":{"list":[1,100000000000000000000]}}', 'eventData.list[1]'],
        ['products', '{"productId":"p1","properties":{"price":{"cents":12345678901234567890}}}', 'properties.price.cents'],
        ['users', '{"userId":"u1","attributes":{"big":9007199254740992}}', 'attributes.big'],
      ];
      for (const [endpoint, raw, field] of cases) {
        const reply = await storesNothing(app, () => app.ingest(account, endpoint, {}, { raw }));
        expect(itemError(reply), raw).to.equal(refusal(field));
      }
    });

    it('answers 10,000 levels of nesting around a long integer with 400, before parsing it again', async () => {
      const raw = `{"userId":"u1","eventName":"x","eventData":${'['.repeat(10_000)}9007199254740993${']'.repeat(10_000)}}`;
      const reply = await storesNothing(app, () => app.ingest(account, 'events', {}, { raw }));
      expect(requestError(reply, 400)).to.match(/is nested too deep/);
      queued(await app.ingest(account, 'events', { userId: 'u1', eventName: 'after' }));
    });

    it('refuses such an integer in one bulk element only, and under an Idempotency-Key', async () => {
      const raw = '[{"userId":"u1","attributes":{"n":9007199254740993}},{"userId":"u2","attributes":{"n":9007199254740991}}]';
      const reply = await app.ingest(account, 'users/bulk', {}, { raw, headers: { 'Idempotency-Key': 'big-1' } });
      expect(reply.status).to.equal(200);
      const [first, second] = (reply.body as { response: { status: string; message?: string }[] }).response;
      expect(first).to.deep.equal({ status: 'error', message: refusal('attributes.n') });
      expect(second?.status).to.equal('queued');
    });

    it('keeps the largest safe integers, long digit strings, fractions and numbers written with an exponent', async () => {
      const raw = `{"userId":"u1","eventName":"x","eventData":{"max":${limit},"min":-${limit},"fraction":0.1,"small":1e-300,"large":1e20,"avogadro":6.02214076e23,"big":1.5e300,"card":"12345678901234567890"}}`;
      queued(await app.ingest(account, 'events', {}, { raw }));
      const [stored] = await app.events();
      expect(stored?.data.eventData).to.deep.equal({
        max: limit,
        min: -limit,
        fraction: 0.1,
        small: 1e-300,
        large: 1e20,
        avogadro: 6.02214076e23,
        big: 1.5e300,
        card: '12345678901234567890',
      });
    });
  });
});
