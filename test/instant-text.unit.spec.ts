import { expect } from 'chai';
import { instantText } from '../src/cli/instant-text.js';

/** The one format of instants in the CLI's text output, the dashboard's (its When component). */
describe('CLI instant text (unit)', () => {
  it('shows an instant from its UTC value to the second: YYYY-MM-DD HH:MM:SS UTC', () => {
    expect(instantText('2026-11-25T15:00:32.188Z')).to.equal('2026-11-25 15:00:32 UTC');
    // Another offset is the same instant, shown in UTC; fractions are cut, not rounded up.
    expect(instantText('2026-11-25T16:00:32.999+01:00')).to.equal('2026-11-25 15:00:32 UTC');
    expect(instantText('2026-12-31T23:59:59.999Z')).to.equal('2026-12-31 23:59:59 UTC');
  });

  it('shows a time the server keeps to the minute without seconds', () => {
    expect(instantText('2026-11-25T15:00:00.000Z', { precision: 'minute' })).to.equal('2026-11-25 15:00 UTC');
    expect(instantText('2026-11-25T09:07:00+02:00', { precision: 'minute' })).to.equal('2026-11-25 07:07 UTC');
  });

  it("shows no instant as '—' or the text given, and a text that is no instant as it is", () => {
    expect(instantText(null)).to.equal('—');
    expect(instantText(undefined)).to.equal('—');
    expect(instantText('')).to.equal('—');
    expect(instantText(null, { none: 'never', precision: 'minute' })).to.equal('never');
    expect(instantText('not a time')).to.equal('not a time');
  });
});
