import { expect } from 'chai';
import { createTrackerWith, type TrackerOptions } from '@tracking-ingestion/sdk/browser/internals';
import { FakeLocks, FakePage, settle } from './browser-fakes.js';

const options: TrackerOptions = { baseUrl: 'https://track.example/', licenseCode: 'L1', browserKey: 'tbk_key' };
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A second page of the same site and visitor: same cookies, storage and locks. */
function nextPage(page: FakePage, url: string): FakePage {
  return new FakePage(url, { document: page.document, storage: page.storage, locks: page.navigator.locks as FakeLocks });
}

describe('browser SDK tracker (unit)', () => {
  it('sends a first visit as a user item with its device, then events with its anonymousId', async () => {
    const page = new FakePage('https://shop.example.com/cart?x=1');
    const tracker = createTrackerWith(options, page.globals);
    tracker.page({ step: 2 });
    tracker.track({ eventName: 'signup', eventData: { plan: 'gold' } });
    await tracker.flush();
    const anonymousId = tracker.anonymousId;
    expect(anonymousId).to.match(uuid);
    expect(page.items('users')).to.deep.equal([{ anonymousId, device_type: 'desktop', attributes: {} }]);
    const events = page.items('events');
    expect(events.map(({ eventTime, ...event }) => (expect(eventTime).to.be.a('string'), event))).to.deep.equal([
      { anonymousId, eventName: 'page_view', eventData: { url: 'https://shop.example.com/cart?x=1', path: '/cart', referrer: 'https://search.example/', title: 'Shop', step: 2 } },
      { anonymousId, eventName: 'signup', eventData: { plan: 'gold' } },
    ]);
    expect(new Date(String(events[0]?.eventTime)).toISOString()).to.equal(events[0]?.eventTime);
    const url = new URL(page.service.sent[0]?.url ?? '');
    expect(`${url.origin}${url.pathname}`).to.equal('https://track.example/v1/accounts/L1/users/bulk');
    expect(url.searchParams.get('key')).to.equal('tbk_key');
    expect(url.searchParams.get('idempotencyKey')).to.match(uuid);
  });

  it('keeps the anonymousId in a cookie on the widest domain, mirrored in localStorage', () => {
    const page = new FakePage('https://shop.example.com/');
    const tracker = createTrackerWith(options, page.globals);
    const written = page.document.assignments.find((text) => text.startsWith('trk_aid='));
    expect(written).to.equal(`trk_aid=${tracker.anonymousId}; Max-Age=34560000; Path=/; SameSite=Lax; Domain=example.com; Secure`);
    expect(page.document.cookies.get('trk_aid')?.domain).to.equal('example.com');
    expect(page.document.cookies.has('trk_probe'), 'the probe is removed').to.equal(false);
    expect(page.storage.getItem('trk_aid')).to.equal(tracker.anonymousId);
  });

  it('takes the cookieDomain option as it is, and writes no Secure on http', () => {
    const page = new FakePage('http://a.b.example.com/');
    createTrackerWith({ ...options, cookieDomain: 'b.example.com' }, page.globals);
    expect(page.document.assignments.filter((text) => text.startsWith('trk_probe'))).to.deep.equal([]);
    expect(page.document.assignments.find((text) => text.startsWith('trk_aid='))).to.match(/; Domain=b\.example\.com$/);
  });

  it('lets the cookie win over storage, and rewrites a missing cookie from storage', () => {
    const page = new FakePage('https://shop.example.com/');
    page.document.cookie = 'trk_aid=from-cookie; Max-Age=100';
    page.storage.setItem('trk_aid', 'from-storage');
    page.storage.setItem('trk_uid', 'old-visitor');
    const tracker = createTrackerWith(options, page.globals);
    expect(tracker.anonymousId).to.equal('from-cookie');
    expect(page.storage.getItem('trk_aid')).to.equal('from-cookie');
    expect(tracker.userId, "the userId stored beside another visitor's id is not this visitor's").to.equal(undefined);

    const other = new FakePage('https://blog.example.com/');
    other.storage.setItem('trk_aid', 'kept-in-storage');
    const second = createTrackerWith(options, other.globals);
    expect(second.anonymousId).to.equal('kept-in-storage');
    expect(other.document.cookies.get('trk_aid')?.value).to.equal('kept-in-storage');
    expect(other.items('users'), 'not a new visitor').to.deep.equal([]);
  });

  it('sends the campaign of a landing URL: utm_source at the top, the others as attributes, on a first visit and later', async () => {
    const page = new FakePage('https://shop.example.com/?utm_source=news&utm_medium=email&utm_campaign=spring&other=1');
    const first = createTrackerWith(options, page.globals);
    await first.flush();
    const anonymousId = first.anonymousId;
    expect(page.items('users')).to.deep.equal([{ anonymousId, utm_source: 'news', device_type: 'desktop', attributes: { utm_medium: 'email', utm_campaign: 'spring' } }]);

    const later = nextPage(page, 'https://shop.example.com/?utm_campaign=autumn');
    const second = createTrackerWith(options, later.globals);
    await second.flush();
    expect(later.items('users')).to.deep.equal([{ anonymousId, attributes: { utm_campaign: 'autumn' } }]);
  });

  it('identifies: merges the anonymous profile into the user, then events carry the userId', async () => {
    const page = new FakePage('https://shop.example.com/');
    const tracker = createTrackerWith(options, page.globals);
    const anonymousId = tracker.anonymousId;
    tracker.identify({ userId: 'u-42', firstName: 'Ann', attributes: { plan: 'gold' } });
    tracker.track({ eventName: 'paid' });
    tracker.product({ productId: 'p-1', properties: { price: 3 } });
    tracker.productEvent({ productId: 'p-1', eventName: 'view', eventData: {} });
    await tracker.flush();
    expect(page.items('users')[1]).to.deep.equal({ firstName: 'Ann', anonymousId, userId: 'u-42', attributes: { plan: 'gold' } });
    expect(page.items('events')[0]).to.include({ userId: 'u-42', eventName: 'paid' }).and.not.have.property('anonymousId');
    expect(page.items('products')).to.deep.equal([{ productId: 'p-1', properties: { price: 3 }, userId: 'u-42' }]);
    expect(page.items('productsevents')[0]).to.include({ productId: 'p-1', userId: 'u-42', eventName: 'view' });
    expect(tracker.userId).to.equal('u-42');
    expect(page.document.cookies.get('trk_uid')?.value).to.equal('u-42');
    expect(page.storage.getItem('trk_uid')).to.equal('u-42');
    tracker.identify({ lastName: 'Lee' });
    await tracker.flush();
    expect(page.items('users')[2]).to.deep.equal({ lastName: 'Lee', anonymousId, userId: 'u-42', attributes: {} });
  });

  it('resets before identifying another user, and on reset(): a new anonymousId, no userId', async () => {
    const page = new FakePage('https://shop.example.com/');
    const tracker = createTrackerWith(options, page.globals);
    tracker.identify({ userId: 'u-1' });
    const first = tracker.anonymousId;
    tracker.identify({ userId: 'u-2' });
    const second = tracker.anonymousId;
    expect(second).to.match(uuid).and.not.equal(first);
    tracker.reset();
    expect(tracker.userId).to.equal(undefined);
    expect(page.document.cookies.has('trk_uid')).to.equal(false);
    const third = tracker.anonymousId;
    expect(third).to.match(uuid).and.not.equal(second);
    await tracker.flush();
    expect(page.items('users')).to.deep.equal([
      { anonymousId: first, device_type: 'desktop', attributes: {} },
      { anonymousId: first, userId: 'u-1', attributes: {} },
      { anonymousId: second, device_type: 'desktop', attributes: {} },
      { anonymousId: second, userId: 'u-2', attributes: {} },
      { anonymousId: third, device_type: 'desktop', attributes: {} },
    ]);
  });

  it('keeps a long userId in storage alone: the cookies stay under 200 bytes', () => {
    const page = new FakePage('https://shop.example.com/');
    const tracker = createTrackerWith(options, page.globals);
    const long = `u-${'x'.repeat(150)}`;
    tracker.identify({ userId: long });
    expect(page.document.cookies.has('trk_uid')).to.equal(false);
    expect(page.storage.getItem('trk_uid')).to.equal(long);
    expect(tracker.userId).to.equal(long);
  });

  it("with consent pending writes and sends nothing, then on 'granted' writes and sends what waited", async () => {
    const page = new FakePage('https://shop.example.com/?utm_source=ads');
    const tracker = createTrackerWith({ ...options, consent: 'pending' }, page.globals);
    tracker.page();
    await tracker.flush();
    await settle();
    expect(page.document.assignments).to.deep.equal([]);
    expect(page.storage.writes).to.equal(0);
    expect(page.service.sent).to.deep.equal([]);
    const anonymousId = tracker.anonymousId;
    tracker.consent('granted');
    expect(page.document.cookies.get('trk_aid')?.value).to.equal(anonymousId);
    await tracker.flush();
    expect(page.items('users')).to.deep.equal([{ anonymousId, utm_source: 'ads', device_type: 'desktop', attributes: {} }]);
    expect(page.items('events').map((event) => event.anonymousId)).to.deep.equal([anonymousId]);
  });

  it("with consent 'denied' drops what waited and stores nothing", async () => {
    const page = new FakePage('https://shop.example.com/');
    const tracker = createTrackerWith({ ...options, consent: 'pending' }, page.globals);
    tracker.track({ eventName: 'a' });
    tracker.consent('denied');
    tracker.track({ eventName: 'b' });
    await tracker.flush();
    expect(page.service.sent).to.deep.equal([]);
    expect(page.storage.writes).to.equal(0);
    expect(tracker.stats()).to.deep.include({ queued: 0, dropped: 2 });
  });

  it('honours Global Privacy Control unless told to ignore it', async () => {
    const page = new FakePage('https://shop.example.com/', { gpc: true });
    const tracker = createTrackerWith(options, page.globals);
    tracker.page();
    tracker.consent('granted');
    await tracker.flush();
    expect(page.document.assignments).to.deep.equal([]);
    expect(page.storage.writes + page.service.sent.length).to.equal(0);
    expect(tracker.anonymousId).to.equal(undefined);

    const ignoring = new FakePage('https://shop.example.com/', { gpc: true });
    const tracking = createTrackerWith({ ...options, globalPrivacyControl: 'ignore' }, ignoring.globals);
    tracking.page();
    await tracking.flush();
    expect(ignoring.items('events')).to.have.length(1);
  });

  it('opts out: drops the queue, removes its cookies and storage, and later pages send nothing', async () => {
    const page = new FakePage('https://shop.example.com/');
    page.storage.setItem('site-data', 'kept');
    const tracker = createTrackerWith(options, page.globals);
    tracker.identify({ userId: 'u-1' });
    tracker.track({ eventName: 'a' });
    tracker.optOut();
    tracker.track({ eventName: 'b' });
    await tracker.flush();
    expect(page.service.sent).to.deep.equal([]);
    expect([...page.document.cookies.keys()]).to.deep.equal(['trk_optout']);
    expect(page.document.cookies.get('trk_optout')).to.deep.equal({ value: '1', domain: 'example.com' });
    expect([...page.storage.entries.keys()]).to.deep.equal(['site-data']);
    expect(tracker.stats().dropped).to.equal(3);

    const later = nextPage(page, 'https://shop.example.com/next');
    const second = createTrackerWith(options, later.globals);
    second.page();
    second.consent('granted');
    await second.flush();
    expect(later.service.sent).to.deep.equal([]);
    expect([...page.document.cookies.keys()]).to.deep.equal(['trk_optout']);
  });

  it("with pageViews 'history', sends a page view on each navigation that changes the URL", async () => {
    const page = new FakePage('https://shop.example.com/a');
    const tracker = createTrackerWith({ ...options, pageViews: 'history' }, page.globals);
    page.globals.history.pushState({}, '', '/b');
    page.globals.history.replaceState({}, '', '/b');
    page.globals.history.replaceState({}, '', '/b?tab=2');
    page.url = new URL('https://shop.example.com/a');
    page.dispatch('popstate');
    page.dispatch('popstate');
    await tracker.flush();
    expect(page.items('events').map((event) => [(event.eventData as { path: string }).path, (event.eventData as { referrer: string }).referrer])).to.deep.equal([
      ['/b', 'https://shop.example.com/a'],
      ['/b', 'https://shop.example.com/b'],
      ['/a', 'https://shop.example.com/b?tab=2'],
    ]);
  });

  it('sends what is queued by beacon when the page is left, keeping it stored for the next page', async () => {
    const page = new FakePage('https://shop.example.com/');
    const beacons: string[] = [];
    page.navigator.sendBeacon = (url: string, body: string) => (beacons.push(body), true);
    const tracker = createTrackerWith(options, page.globals);
    await settle();
    tracker.track({ eventName: 'leaving' });
    page.dispatch('pagehide', { persisted: false });
    expect(beacons).to.have.length(2);
    expect(page.service.sent).to.deep.equal([]);
    const area = [...page.storage.entries.keys()].find((key) => key.startsWith('trk_q:L1:'));
    expect(area).to.be.a('string');
    expect((JSON.parse(page.storage.getItem(area ?? '') ?? '{}') as { b: unknown[] }).b).to.have.length(2);
  });

  it('refuses to start without its required options', () => {
    const page = new FakePage('https://shop.example.com/');
    expect(() => createTrackerWith({ ...options, browserKey: '' }, page.globals)).to.throw(TypeError, 'option browserKey is required');
  });

  it('works without storage (blocked) and without Web Locks', async () => {
    const page = new FakePage('https://shop.example.com/');
    const globals = { ...page.globals, navigator: { ...page.navigator, locks: undefined } };
    Object.defineProperty(globals, 'localStorage', {
      get() {
        throw new Error('SecurityError');
      },
    });
    const tracker = createTrackerWith(options, globals);
    tracker.track({ eventName: 'a' });
    await tracker.flush();
    expect(page.items('events')).to.have.length(1);
    expect(page.items('events')[0]?.anonymousId).to.equal(page.document.cookies.get('trk_aid')?.value);
  });
});
