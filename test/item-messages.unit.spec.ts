import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schemasDir } from '../src/paths.js';
import { describeErrors, Validator, type SchemaName } from '../src/ingest/validation.js';

/**
 * The message a refused item gets names the field and says what it must be (docs/decisions.md,
 * Replies): one case per kind of schema error, through the schemas of schemas/.
 */
describe('item refusal messages (unit)', () => {
  const validator = new Validator();
  const cases: Array<[SchemaName, unknown, string]> = [
    ['user', { userId: 5, attributes: {} }, 'userId must be a string'],
    ['user', { userId: 'u', attributes: 'x' }, 'attributes must be an object'],
    ['user', { userId: 'u', attributes: { k: null } }, 'attributes.k must be a string, a number or a boolean'],
    ['user', { userId: 'u', attributes: { k: [1] } }, 'attributes.k must be a string, a number or a boolean'],
    ['user', { userId: 'u', attributes: {}, opt_in_sms: 'yes' }, 'opt_in_sms must be a boolean'],
    ['user', { userId: 'u', attributes: {}, birth_date: 5 }, 'birth_date must be a string'],
    ['user', { userId: 'u', attributes: {}, birth_date: '2024-02-30T00:00:00' }, 'birth_date'],
    ['user', [], 'the item must be an object'],
    ['user', 'x', 'the item must be an object'],
    ['user', { attributes: {} }, 'userId or anonymousId is required'],
    ['event', { eventName: 'x' }, 'userId or anonymousId is required'],
    ['user', { userId: 'u' }, 'attributes is required'],
    ['product-event', { productId: 'p' }, 'eventName is required'],
    ['product', {}, 'productId is required'],
    ['user', { userId: 'u', attributes: {}, foo: 1 }, "unknown field 'foo'"],
    ['event', { userId: 'u', eventName: 'x', extra: {} }, "unknown field 'extra'"],
    [
      'user',
      { userId: 'u', attributes: { ok: 1, Bad: 1 } },
      "attribute key 'Bad' is not allowed: keys use lowercase letters, digits and underscores and start with a letter (at most 100 characters)",
    ],
    ['product-event', { productId: 'p', eventName: 'e', userId: 5 }, 'userId must be a string or null'],
    ['product-event', { productId: 'p', eventName: 'e', eventData: { k: null } }, 'eventData.k must be a string, a number, a boolean, an array or an object'],
    ['product-event', { productId: 'p', eventName: 'e', eventData: { 0: null } }, 'eventData[0] must be a string, a number, a boolean, an array or an object'],
    ['event', { userId: 'u', eventName: 'x', eventData: 'x' }, 'eventData must be an object'],
    ['product', { productId: 'p', properties: [] }, 'properties must be an object'],
    ['event', { userId: 'u', eventName: '' }, 'eventName cannot be empty'],
    ['product-event', { productId: 'p', eventName: 'e'.repeat(51) }, 'eventName must be at most 50 characters'],
    [
      'event',
      { userId: 'u', eventName: 'x', eventTime: 'bad' },
      'eventTime must be an ISO 8601 date-time such as 2024-05-01T12:30:00, 2024-05-01T12:30:00.123456+0200 or 2024-05-01T12:30:00Z',
    ],
    ['event', { userId: 'u', eventName: 'x', eventData: { a: Infinity } }, 'eventData.a must be a finite number'],
    ['event', { userId: 'u', eventName: 'x', eventData: { a: 'x\u0000' } }, 'eventData.a contains a NUL character or an unpaired surrogate, which cannot be stored'],
    ['event', { userId: 'u', eventName: 'x', eventData: { a: ['\uD800'] } }, 'eventData.a[0] contains a NUL character or an unpaired surrogate, which cannot be stored'],
    ['user', null, 'the item must be an object'],
    ['user', { userId: 'u', attributes: {}, children: -2147483649 }, 'children must be an integer from -2147483648 to 2147483647'],
    ['user', { userId: 'u', attributes: {}, children: 2147483648 }, 'children must be an integer from -2147483648 to 2147483647'],
    ['product-event', { productId: 'p', eventName: 'e', eventData: { 12: null } }, 'eventData[12] must be a string, a number, a boolean, an array or an object'],
    ['product-event', { productId: 'p', eventName: 'e', eventData: { a1: null } }, 'eventData.a1 must be a string, a number, a boolean, an array or an object'],
    ['product-event', { productId: 'p', eventName: 'e', eventData: { '1a': null } }, 'eventData.1a must be a string, a number, a boolean, an array or an object'],
  ];

  for (const [schema, item, message] of cases) {
    it(`${schema} ${JSON.stringify(item).slice(0, 60)}: ${message}`, () => {
      const result = validator.validate(schema, item);
      expect(result.ok).to.equal(false);
      const text = result.ok ? '' : result.message;
      // A message that is only a field name is checked as the start of the message.
      if (/^[a-z_]+$/.test(message)) expect(text.startsWith(`${message} `), text).to.equal(true);
      else expect(text).to.equal(message);
    });
  }

  it('accepts a valid item of each kind', () => {
    expect(validator.validate('user', { anonymousId: 'a', attributes: { k: 'v', n: 1, b: true } })).to.deep.equal({ ok: true });
    expect(validator.validate('event', { anonymousId: 'a', eventName: 'x', eventTime: '2024-01-01T00:00:00Z', eventData: {} })).to.deep.equal({ ok: true });
    expect(validator.validate('product', { productId: 'p', userId: 'u', properties: {} })).to.deep.equal({ ok: true });
    expect(validator.validate('product-event', { productId: 'p', userId: null, eventName: 'e', eventData: { a: [1], o: {} } })).to.deep.equal({ ok: true });
  });

  it('an error of another keyword is described by its own message, or as invalid', () => {
    const error = { keyword: 'const', instancePath: '/eventData/list/2', schemaPath: '#', params: {} };
    expect(describeErrors([{ ...error, message: 'must be equal to constant' }])).to.equal('eventData.list[2] must be equal to constant');
    expect(describeErrors([error])).to.equal('eventData.list[2] is invalid');
    expect(describeErrors([{ ...error, instancePath: '' }])).to.equal('the item is invalid');
    expect(describeErrors([])).to.equal('invalid item');
  });

  it('names the accepted range for a date-time out of it, and the accepted forms for one that is no date', () => {
    const fresh = new Validator();
    expect(fresh.validate('event', { userId: 'u', eventName: 'x', eventTime: '9999-12-31T23:59:59-1400' })).to.deep.equal({
      ok: false,
      message: 'eventTime must be an ISO 8601 date-time from 0001-01-01T00:00:00.000000Z to 9999-12-31T23:59:59.999999Z once read as UTC',
      field: 'eventTime',
    });
    expect(fresh.validate('user', { userId: 'u', attributes: {}, birth_date: '2024-02-30T00:00:00' })).to.deep.equal({
      ok: false,
      message: 'birth_date must be an ISO 8601 date-time such as 2024-05-01T12:30:00, 2024-05-01T12:30:00.123456+0200 or 2024-05-01T12:30:00Z',
      field: 'birth_date',
    });
    expect(fresh.validate('user', { userId: 'u', attributes: {}, birth_date: '2024-02-29T00:00:00' })).to.deep.equal({ ok: true });
  });

  it('reads the .json files of a schema folder, other files there ignored, and names a missing schema', () => {
    const dir = mkdtempSync(join(tmpdir(), 'schemas-'));
    try {
      for (const file of readdirSync(schemasDir).filter((f) => f.endsWith('.json'))) copyFileSync(join(schemasDir, file), join(dir, file));
      writeFileSync(join(dir, 'README.md'), '# not a schema');
      expect(new Validator(dir).validate('product', { productId: 'p' })).to.deep.equal({ ok: true });
      rmSync(join(dir, 'user.json'));
      expect(() => new Validator(dir)).to.throw('schemas/user.json is missing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
