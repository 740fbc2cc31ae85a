import { expect } from 'chai';
import { isDataError } from '../projections/runner/apply-errors.js';

const pgError = (code: string, message = 'from PostgreSQL'): Error => Object.assign(new Error(message), { code, severity: 'ERROR' });

describe('which errors of a projection park an event (unit)', () => {
  it('parks on data exceptions (22), constraint violations (23) and errors thrown by the fold', () => {
    expect(isDataError(pgError('22008', 'time zone displacement out of range'))).to.equal(true);
    expect(isDataError(pgError('22P02'))).to.equal(true);
    expect(isDataError(pgError('23514'))).to.equal(true);
    expect(isDataError(new TypeError('Cannot convert undefined or null to object'))).to.equal(true);
    expect(isDataError(new RangeError('Invalid string length'))).to.equal(true);
  });

  it('retries, never parks, on timeouts, conflicts, lost connections and exhausted resources', () => {
    for (const code of ['57014', '40001', '40P01', '08006', '57P01', '53300', '55P03', '42P01']) {
      expect(isDataError(pgError(code)), code).to.equal(false);
    }
    expect(isDataError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).to.equal(false);
    expect(isDataError(new Error('Connection terminated unexpectedly'))).to.equal(false);
    expect(isDataError(new Error('Query read timeout'))).to.equal(false);
  });
});
