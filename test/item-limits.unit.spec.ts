import { expect } from 'chai';
import { identityProblem } from '../src/ingest/identifiers.js';
import { Validator } from '../src/ingest/validation.js';
import { systemAttributes } from '../src/spec/system-attributes.js';
import { int4Max, int4Min, intAttributes, lengthLimits, notInt4, placeholderIds, schemaOf, textAttributes } from './support/documented-limits.js';

/**
 * The documented limits of item fields (docs/decisions.md) held against the JSON Schemas of
 * schemas/ and the identity check, without HTTP: the e2e specs check the same through the service.
 */
describe('item limits: schemas and identities (unit)', () => {
  const validator = new Validator();
  const problem = (endpoint: keyof typeof schemaOf, item: unknown): string | null => {
    const result = validator.validate(schemaOf[endpoint], item);
    return result.ok ? null : result.message;
  };

  it('lists every INT, INT4 and STRING system attribute of spec 2.2 (the lists the limit specs walk)', () => {
    const ofType = (...types: string[]) => systemAttributes.filter((a) => types.includes(a.type)).map((a) => a.name);
    expect(ofType('INT', 'INT4')).to.have.members([...intAttributes]);
    expect(ofType('STRING')).to.have.members(['userId', 'anonymousId', ...textAttributes]);
  });

  for (const name of intAttributes) {
    it(`INT attribute ${name}: refuses 1.5, "3", 2147483648 and -2147483649 naming it; takes both ends of the 32-bit range`, () => {
      for (const value of notInt4) {
        const message = problem('users', { userId: 'u-1', attributes: {}, [name]: value });
        expect(message, `${name}: ${JSON.stringify(value)}`).to.be.a('string').that.contains(name);
      }
      expect(problem('users', { userId: 'u-1', attributes: {}, [name]: 1.5 })).to.equal(`${name} must be an integer`);
      expect(problem('users', { userId: 'u-1', attributes: {}, [name]: int4Max + 1 })).to.equal(`${name} must be an integer from -2147483648 to 2147483647`);
      for (const value of [int4Min, int4Max, 0]) expect(problem('users', { userId: 'u-1', attributes: {}, [name]: value }), String(value)).to.equal(null);
    });
  }

  for (const limit of lengthLimits) {
    it(`${limit.endpoint} ${limit.field}: ${limit.max} characters are taken, ${limit.max + 1} refused naming it`, () => {
      expect(problem(limit.endpoint, limit.item('a'.repeat(limit.max)))).to.equal(null);
      const message = problem(limit.endpoint, limit.item('a'.repeat(limit.max + 1)));
      expect(message).to.be.a('string').that.contains(limit.field);
    });
  }

  it('counts: 500 custom attributes a user and 25 eventData keys a product event are taken, one more refused', () => {
    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
    expect(problem('users', { userId: 'u-1', attributes: keys(500) })).to.equal(null);
    expect(problem('users', { userId: 'u-1', attributes: keys(501) })).to.equal('attributes must have at most 500 properties');
    const productEvent = { productId: 'p-1', eventName: 'Viewed' };
    expect(problem('productsevents', { ...productEvent, eventData: keys(25) })).to.equal(null);
    expect(problem('productsevents', { ...productEvent, eventData: keys(26) })).to.equal('eventData must have at most 25 properties');
  });

  it('refuses every placeholder id of docs/decisions.md, whatever its case and surrounding blanks, naming the field', () => {
    for (const id of placeholderIds) {
      for (const sent of [id, id.toUpperCase(), ` ${id}\t`]) {
        expect(identityProblem('userId', sent), JSON.stringify(sent)).to.equal(`userId '${sent}' is a placeholder, not an identity`);
      }
    }
    for (const blank of ['', ' ', '\t\n']) expect(identityProblem('anonymousId', blank)).to.equal('anonymousId cannot be empty');
    for (const id of ['u-0', '00', 'nonesuch', 'guests', 'nan1', 'a']) expect(identityProblem('userId', id), id).to.equal(null);
  });
});
