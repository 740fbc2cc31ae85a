import { expect } from 'chai';
import { campaignOf, cookieBudgetBytes, CookieJar, deviceType, domainCandidates, fitsCookieBudget, readCookie, uuidOf } from '@tracking-ingestion/sdk/browser/internals';
import { CookieDocument } from './browser-fakes.js';

describe('browser SDK cookies and page context (unit)', () => {
  it('reads a cookie among others, decoded', () => {
    expect(readCookie('a=1; trk_uid=u%2042; trk_aid=x', 'trk_uid')).to.equal('u 42');
    expect(readCookie('xtrk_aid=1', 'trk_aid')).to.equal(undefined);
    expect(readCookie('trk_aid=%E0%A4%A', 'trk_aid'), 'unreadable').to.equal(undefined);
  });

  it('keeps the cookies under 200 bytes together, as a Cookie header carries them', () => {
    expect(cookieBudgetBytes).to.equal(200);
    const aid = '00000000-0000-4000-8000-000000000001';
    const room = 199 - `trk_aid=${aid}; trk_uid=`.length;
    expect(fitsCookieBudget({ trk_aid: aid, trk_uid: 'x'.repeat(room) })).to.equal(true);
    expect(fitsCookieBudget({ trk_aid: aid, trk_uid: 'x'.repeat(room + 1) })).to.equal(false);
    expect(fitsCookieBudget({ trk_aid: aid, trk_uid: 'é'.repeat(room / 6) }), 'encoded: é is 6 bytes').to.equal(Math.floor(room / 6) * 6 <= room);
    expect(fitsCookieBudget({ trk_aid: undefined, trk_uid: 'x'.repeat(150) })).to.equal(true);
  });

  it('tries the widest domain first; none for an IP address or localhost', () => {
    expect(domainCandidates('a.shop.example.co.uk')).to.deep.equal(['co.uk', 'example.co.uk', 'shop.example.co.uk', 'a.shop.example.co.uk']);
    expect(domainCandidates('localhost')).to.deep.equal([]);
    expect(domainCandidates('127.0.0.1')).to.deep.equal([]);
    expect(domainCandidates('[::1]')).to.deep.equal([]);
  });

  it('sets cookies on the first domain that reads back (a public suffix never does)', () => {
    const document = new CookieDocument('a.shop.example.co.uk');
    const jar = new CookieJar(document, 'a.shop.example.co.uk', true);
    jar.set('trk_aid', 'x');
    expect(document.cookies.get('trk_aid')).to.deep.equal({ value: 'x', domain: 'example.co.uk' });
    expect(document.cookies.has('trk_probe')).to.equal(false);
    jar.remove('trk_aid');
    expect(document.cookies.has('trk_aid')).to.equal(false);
    const local = new CookieDocument('localhost');
    new CookieJar(local, 'localhost', false).set('trk_aid', 'y');
    expect(local.assignments).to.deep.equal(['trk_aid=y; Max-Age=34560000; Path=/; SameSite=Lax']);
  });

  it('tells the device from Client Hints or the User-Agent', () => {
    const agents: [string, string][] = [
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148', 'mobile'],
      ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/140.0 Mobile Safari/537.36', 'mobile'],
      ['Mozilla/5.0 (Linux; Android 14; SM-X910) AppleWebKit/537.36 Chrome/140.0 Safari/537.36', 'tablet'],
      ['Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148', 'tablet'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36', 'desktop'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15', 'desktop'],
    ];
    for (const [userAgent, device] of agents) expect(deviceType({ userAgent }), userAgent).to.equal(device);
    const mac = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15';
    expect(deviceType({ userAgent: mac, maxTouchPoints: 5 }), 'an iPad asking for the desktop site').to.equal('tablet');
    expect(deviceType({ userAgent: agents[4]?.[0] ?? '', userAgentData: { mobile: true } })).to.equal('mobile');
  });

  it('reads the campaign of a landing URL', () => {
    expect(campaignOf('?utm_source=a&utm_medium=b&utm_content=c&utm_Bad=d&ref=x')).to.deep.equal({ utm_source: 'a', attributes: { utm_medium: 'b', utm_content: 'c' } });
    expect(campaignOf('?utm_medium=b')).to.deep.equal({ attributes: { utm_medium: 'b' } });
    expect(campaignOf('?ref=x&utm_source=')).to.equal(null);
    expect(campaignOf('')).to.equal(null);
  });

  it('makes UUIDs v4 without randomUUID (pages over http)', () => {
    const id = uuidOf({ getRandomValues: <T extends Uint8Array>(array: T): T => (array.fill(0xff), array) });
    expect(id).to.equal('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });
});
