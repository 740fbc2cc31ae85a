import { expect } from 'chai';
import { Validator } from '../src/ingest/validation.js';

/** The field Warnings groups a refused item by: a top-level field of the schema, never a client's own name. */

describe('the field of a refused item (unit)', () => {
  const validator = new Validator();
  const fieldOf = (schema: 'user' | 'event' | 'product' | 'product-event', item: unknown): string => {
    const result = validator.validate(schema, item);
    if (result.ok) throw new Error('accepted');
    return result.field;
  };

  it('names the top-level field a message is about', () => {
    expect(fieldOf('event', { userId: 'u' })).to.equal('eventName');
    expect(fieldOf('event', { userId: 'u', eventName: 'e', eventTime: 'yesterday' })).to.equal('eventTime');
    expect(fieldOf('user', { userId: 'u', attributes: {}, points: 1.5 })).to.equal('points');
    expect(fieldOf('user', { userId: 'u', attributes: {}, birth_date: '2026-13-40' })).to.equal('birth_date');
    expect(fieldOf('product', { productId: 'p', properties: 'no' })).to.equal('properties');
  });

  it('takes a nested problem to its top-level field, so that custom keys make no groups of their own', () => {
    expect(fieldOf('user', { userId: 'u', attributes: { 'Bad-Key': 1 } })).to.equal('attributes');
    expect(fieldOf('user', { userId: 'u', attributes: { plan: { nested: true } } })).to.equal('attributes');
    expect(fieldOf('product-event', { productId: 'p', eventName: 'e', eventData: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i])) })).to.equal('eventData');
  });

  it("calls a field the schema does not have 'unknown field', and a missing person 'userId/anonymousId'", () => {
    expect(fieldOf('event', { userId: 'u', eventName: 'e', ['x'.repeat(50)]: 1 })).to.equal('unknown field');
    expect(fieldOf('event', { eventName: 'e' })).to.equal('userId/anonymousId');
    expect(fieldOf('event', [])).to.equal('');
  });
});
