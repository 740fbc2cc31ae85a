import { expect } from 'chai';
import { kindFields } from '../src/cli/import-columns.js';
import { cellAs, inferCell } from '../src/cli/import-infer.js';
import { HeaderError, mapRow, parseHeader } from '../src/cli/import-mapping.js';
import type { ImportKind } from '../src/cli/import-record.js';

describe('import: CSV columns, type inference and mapping (unit)', () => {
  describe('type inference of custom values', () => {
    const cases: [string, unknown, string][] = [
      ['42', 42, 'number'],
      ['-3.25', -3.25, 'number'],
      ['1e3', 1000, 'number'],
      ['0', 0, 'number'],
      ['true', true, 'boolean'],
      ['FALSE', false, 'boolean'],
      ['2024-05-01T12:30:00Z', '2024-05-01T12:30:00Z', 'datetime'],
      ['2024-05-01T12:30:00.123456+0200', '2024-05-01T12:30:00.123456+0200', 'datetime'],
      ['2024-05-01', '2024-05-01', 'string'],
      ['007', '007', 'string'],
      ['+4930123', '+4930123', 'string'],
      ['12345678901234567890', '12345678901234567890', 'string'],
      ['1e999', '1e999', 'string'],
      ['gold', 'gold', 'string'],
      [' 42', ' 42', 'string'],
      ['yes', 'yes', 'string'],
    ];
    for (const [text, value, type] of cases) {
      it(`reads '${text}' as the ${type} ${JSON.stringify(value)}`, () => {
        expect(inferCell(text)).to.deep.equal({ value, type });
      });
    }

    it('reads a cell as its declared type, or says why it is not one', () => {
      expect(cellAs('007', 'string')).to.deep.equal({ value: '007' });
      expect(cellAs('007', 'number')).to.deep.equal({ value: 7 });
      expect(cellAs('2024-05-01', 'datetime')).to.deep.equal({ problem: "'2024-05-01' is not an ISO 8601 date-time" });
      expect(cellAs('1.5', 'integer')).to.deep.equal({ problem: "'1.5' is not an integer" });
      expect(cellAs('9007199254740993', 'integer')).to.deep.equal({ problem: "'9007199254740993' is not an integer" });
      expect(cellAs('maybe', 'boolean')).to.deep.equal({ problem: "'maybe' is not true or false" });
    });
  });

  describe('fields of each kind, from schemas/', () => {
    it('types the users system attributes as docs/spec.md 2.2 does, with flat custom attribute keys', () => {
      const users = kindFields('users');
      expect(users.fields.get('children')).to.equal('integer');
      expect(users.fields.get('opt_in_sms')).to.equal('boolean');
      expect(users.fields.get('zipcode')).to.equal('string');
      expect(users.fields.get('birth_date')).to.equal('string');
      expect(users).to.include({ nested: 'attributes', flatKeys: true, nestedRequired: true });
      expect(users.anyOf).to.deep.equal([['userId'], ['anonymousId']]);
    });

    it('gives events, products and product events their object of free keys, which may nest', () => {
      const nested = (kind: ImportKind) => {
        const { nested, flatKeys, required } = kindFields(kind);
        return { nested, flatKeys, required };
      };
      expect(nested('events')).to.deep.equal({ nested: 'eventData', flatKeys: false, required: ['eventName'] });
      expect(nested('products')).to.deep.equal({ nested: 'properties', flatKeys: false, required: ['productId'] });
      expect(nested('productsevents')).to.deep.equal({ nested: 'eventData', flatKeys: false, required: ['productId', 'eventName'] });
    });
  });

  describe('header', () => {
    const refusal = (kind: ImportKind, header: string[]): string => {
      try {
        parseHeader(kindFields(kind), header);
      } catch (error) {
        expect(error).to.be.instanceOf(HeaderError);
        return (error as Error).message;
      }
      throw new Error('the header was accepted');
    };

    it('refuses a column that is no field of the kind, naming it and the fields there are', () => {
      expect(refusal('products', ['productId', 'price'])).to.equal(
        "column 2 ('price') is not a field of products: use productId, userId or properties.<key>",
      );
    });

    it('refuses a repeated column, a value that is also an object, and a header no item can be made from', () => {
      expect(refusal('users', ['userId', 'attributes.plan', 'attributes.plan'])).to.equal('the header has attributes.plan twice');
      expect(refusal('events', ['userId', 'eventName', 'eventData.a', 'eventData.a.b'])).to.equal(
        'the header has both eventData.a and eventData.a.b: eventData.a cannot be a value and an object',
      );
      expect(refusal('users', ['email', 'attributes.plan'])).to.equal('the header has no userId or anonymousId column: every item of users needs one');
      expect(refusal('productsevents', ['productId', 'userId'])).to.equal('the header has no eventName column: every item of productsevents needs one');
    });

    it('refuses a custom attribute name the service would refuse, and an unknown declared type', () => {
      expect(refusal('users', ['userId', 'attributes.Plan'])).to.equal("column 2 ('attributes.Plan'): attributes keys must match ^[a-z][a-z0-9_]*$");
      expect(refusal('users', ['userId', 'attributes.plan:text'])).to.equal(
        "column 2 ('attributes.plan:text'): 'text' is not a type; declare one of number, string, boolean, datetime",
      );
      expect(refusal('users', ['userId', ''])).to.equal('column 2 of the header is empty');
    });
  });

  describe('rows', () => {
    const map = (kind: ImportKind, header: string[], cells: string[]) => {
      const fields = kindFields(kind);
      return mapRow(fields, parseHeader(fields, header), cells);
    };

    it('maps a user: system attributes by their types, custom attributes inferred or declared, an empty cell left out', () => {
      const header = ['userId', 'email', 'children', 'opt_in_sms', 'zipcode', 'attributes.plan', 'attributes.visits', 'attributes.vip', 'attributes.zip:string', 'attributes.seen'];
      const cells = ['u-1', 'ann@example.com', '2', 'false', '01234', 'gold', '17', 'TRUE', '007', ''];
      expect(map('users', header, cells)).to.deep.equal({
        item: {
          userId: 'u-1',
          email: 'ann@example.com',
          children: 2,
          opt_in_sms: false,
          zipcode: '01234',
          attributes: { plan: 'gold', visits: 17, vip: true, zip: '007' },
        },
      });
    });

    it('sends a user attributes {} when no custom attribute is filled, and leaves an empty eventData out', () => {
      expect(map('users', ['anonymousId', 'attributes.plan'], ['a-1', ''])).to.deep.equal({ item: { anonymousId: 'a-1', attributes: {} } });
      expect(map('events', ['userId', 'eventName', 'eventData.amount'], ['u-1', 'signup', ''])).to.deep.equal({ item: { userId: 'u-1', eventName: 'signup' } });
    });

    it('nests eventData and properties keys at their dots', () => {
      const mapped = map('productsevents', ['productId', 'userId', 'eventName', 'eventTime', 'eventData.price', 'eventData.shop.city'], [
        'p-1',
        'u-1',
        'view',
        '2024-05-01T12:30:00',
        '9.5',
        'Berlin',
      ]);
      expect(JSON.parse(JSON.stringify(mapped))).to.deep.equal({
        item: { productId: 'p-1', userId: 'u-1', eventName: 'view', eventTime: '2024-05-01T12:30:00', eventData: { price: 9.5, shop: { city: 'Berlin' } } },
      });
    });

    it('says why a row does not map, naming the column', () => {
      expect(map('users', ['userId', 'children'], ['u-1', 'two'])).to.deep.equal({ problem: "children: 'two' is not an integer" });
      expect(map('users', ['userId', 'attributes.last_seen:datetime'], ['u-1', 'yesterday'])).to.deep.equal({
        problem: "attributes.last_seen:datetime: 'yesterday' is not an ISO 8601 date-time",
      });
      expect(map('products', ['productId', 'properties.color'], ['p-1'])).to.deep.equal({ problem: 'the row has 1 cells and the header 2 columns' });
    });

    it('keeps a key named __proto__ a key of the item, never of every object', () => {
      const mapped = map('events', ['userId', 'eventName', 'eventData.__proto__.polluted'], ['u-1', 'x', 'yes']);
      expect(JSON.stringify(mapped)).to.equal('{"item":{"userId":"u-1","eventName":"x","eventData":{"__proto__":{"polluted":"yes"}}}}');
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    });
  });
});
