import { expect } from 'chai';
import { presentedToken, sessionCookie, sessionIdOf } from '../src/http/auth.js';

/** How a token is read from an Authorization header and a session id from a Cookie header (src/http/auth.ts). */
describe('credentials as read from request headers (unit)', () => {
  it('takes the token bare or after the word Bearer in any case, blanks around dropped; no token is null', () => {
    for (const [header, token] of [
      ['trk_abc', 'trk_abc'],
      ['Bearer trk_abc', 'trk_abc'],
      ['bEaReR   trk_abc  ', 'trk_abc'],
      ['  Bearer trk_abc', 'trk_abc'],
      ['  trk_abc  ', 'trk_abc'],
      ['xBearer trk_abc', 'xBearer trk_abc'],
      ['Bearer', 'Bearer'],
      [undefined, null],
      ['', null],
      ['   ', null],
    ] as const) {
      expect(presentedToken(header), String(header)).to.equal(token);
    }
  });

  it('takes the session cookie among others, unquoted, blanks around dropped; missing or empty is null', () => {
    const idOf = (cookie?: string) => sessionIdOf({ headers: cookie === undefined ? {} : { cookie } });
    expect(idOf(`theme=dark; ${sessionCookie}=abc; lang=en`)).to.equal('abc');
    expect(idOf(`${sessionCookie}="abc"`)).to.equal('abc');
    expect(idOf(`${sessionCookie}= abc ; lang=en`)).to.equal('abc');
    expect(idOf(`${sessionCookie}x; ${sessionCookie}=abc`), 'a pair without =').to.equal('abc');
    expect(idOf(`${sessionCookie}=`)).to.equal(null);
    expect(idOf(`${sessionCookie}=""`)).to.equal(null);
    expect(idOf('theme=dark')).to.equal(null);
    expect(idOf()).to.equal(null);
  });
});
