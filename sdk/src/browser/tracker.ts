import type { ItemKind, Product, ProductEvent, TrackedEvent, UserProfile } from '../types.js';
import { areaKeys } from './area.js';
import { fitsOneBatch, shapeProblem } from './batches.js';
import { campaignOf, deviceType } from './context.js';
import { CookieJar } from './cookies.js';
import { Delivery, type DeliveryStats } from './delivery.js';
import { storageOf, uuidOf, type BrowserGlobals, type HistoryLike } from './env.js';
import { Identity, optOutName } from './identity.js';

export interface TrackerOptions {
  /** The service, e.g. `https://track.example.com`. */
  baseUrl: string;
  licenseCode: string;
  /** A browser key (`tbk_...`): public, bound to the site's origins. */
  browserKey: string;
  /** `'pending'`: nothing stored or sent until `consent('granted')`. */
  consent?: 'granted' | 'pending';
  /** `'history'`: a page view at each pushState, replaceState and popstate that changes the URL. */
  pageViews?: 'history';
  /** `'ignore'`: track although the browser sends Global Privacy Control. */
  globalPrivacyControl?: 'honour' | 'ignore';
  /** The cookies' domain; by default the widest the browser lets the page set. */
  cookieDomain?: string;
  /** Items and batches refused, storage full, a wrong key: for the site's developers. */
  onError?: (message: string) => void;
}

/** The items of the calls: as the Node SDK's, less what the tracker fills in. */
export type EventInput = Omit<TrackedEvent, 'userId' | 'anonymousId'>;
export type ProfileInput = Omit<UserProfile, 'userId' | 'anonymousId' | 'attributes'> & { userId?: string; attributes?: UserProfile['attributes'] };
export type ProductInput = Omit<Product, 'userId'>;
export type ProductEventInput = Omit<ProductEvent, 'userId'>;
export type TrackerStats = DeliveryStats;

export interface Tracker {
  /** A `page_view` event: `{ url, path, referrer, title }` and `eventData`. */
  page(eventData?: Record<string, unknown>): void;
  track(event: EventInput): void;
  /** A user; with a userId other than the one kept, after reset(): a known user is never merged into another. */
  identify(profile: ProfileInput): void;
  product(product: ProductInput): void;
  productEvent(event: ProductEventInput): void;
  /** Sign-out: forgets the userId, makes a new anonymousId. */
  reset(): void;
  consent(decision: 'granted' | 'denied'): void;
  /** Drops what is held, removes the SDK's cookies and storage, and keeps the cookie `trk_optout=1`: later pages send nothing. */
  optOut(): void;
  /** Settles when what is held has been answered; at once when nothing may be sent. */
  flush(): Promise<void>;
  stats(): TrackerStats;
  readonly anonymousId: string | undefined;
  readonly userId: string | undefined;
}

/** The tracker of a page whose globals are `page` (the window; fakes in tests). */
export function createTrackerWith(options: TrackerOptions, page: BrowserGlobals): Tracker {
  const { baseUrl, licenseCode, browserKey } = options;
  for (const [name, value] of Object.entries({ baseUrl, licenseCode, browserKey })) {
    if (typeof value !== 'string' || value === '') throw new TypeError(`createTracker: option ${name} is required`);
  }
  const { document, location, navigator } = page;
  const report = (message: string): void => {
    try {
      options.onError?.(message);
    } catch {
      // The page's handler failing must not stop tracking.
    }
  };
  const storage = storageOf(page);
  const uuid = (): string => uuidOf(page.crypto);
  const jar = new CookieJar(document, location.hostname, location.protocol === 'https:', options.cookieDomain);
  const identity = new Identity(jar, storage, uuid);
  const refused = (): boolean => jar.get(optOutName) === '1' || (navigator.globalPrivacyControl === true && options.globalPrivacyControl !== 'ignore');
  const root = `${baseUrl.replace(/\/+$/, '')}/v1/accounts/${encodeURIComponent(licenseCode)}/`;
  const delivery = new Delivery(
    {
      storage,
      fetch: (url, init) => page.fetch(url, init),
      beacon: (url, body) => navigator.sendBeacon?.(url, body) ?? false,
      locks: navigator.locks,
      online: () => navigator.onLine !== false,
      uuid,
      now: Date.now,
      later: (ms, run) => {
        const timer = setTimeout(run, ms);
        return () => clearTimeout(timer);
      },
      random: Math.random,
      // Another tab may have opted the visitor out: this one then stops and clears what it holds too.
      allowed: () => live(),
      onError: report,
    },
    `trk_q:${licenseCode}:`,
    (kind, key) => `${root}${kind}/bulk?key=${encodeURIComponent(browserKey)}&idempotencyKey=${encodeURIComponent(key)}`,
  );

  let mode: 'on' | 'pending' | 'off' = options.consent === 'pending' ? 'pending' : 'on';
  /** Stops, drops what is held, and removes the SDK's ids and areas from this device. */
  const off = (): void => {
    mode = 'off';
    identity.persist = false;
    delivery.stop();
    delivery.clear();
    identity.wipe();
    if (storage) for (const key of areaKeys(storage, 'trk_q:')) storage.removeItem(key);
  };
  const start = (): void => {
    mode = 'on';
    identity.persist = true;
    identity.save();
    delivery.start();
  };

  /** Whether items may be made: not opted out (in this tab or another), consent not denied. */
  const live = (): boolean => {
    if (mode !== 'off' && refused()) off();
    return mode !== 'off';
  };
  /** Queues the item `make` builds, made only when it may be: making one may write the visitor's ids. */
  const queue = (kind: ItemKind, make: () => object): void => {
    if (!live()) return;
    let json: string;
    try {
      json = JSON.stringify(make());
    } catch (error) {
      report(`${kind} item not sent: ${String(error)}`);
      return delivery.drop(1);
    }
    if (!fitsOneBatch(json)) {
      report(`${kind} item not sent: larger than a batch (60 KiB)`);
      return delivery.drop(1);
    }
    const problem = shapeProblem(JSON.parse(json));
    if (problem) {
      report(`${kind} item not sent: ${problem}`);
      return delivery.drop(1);
    }
    delivery.enqueue(kind, json);
  };
  /** The landing URL's campaign, sent once, with the first user item of the page. */
  let campaign = campaignOf(location.search);
  /** The ids, made first when there are none: a new visitor, whose first item tells its device. */
  const visitor = (): { anonymousId: string | undefined; userId: string | undefined } => {
    const fresh = identity.ensure();
    if (fresh || campaign) {
      const landing = campaign;
      campaign = null;
      const device_type = fresh ? deviceType(navigator) : undefined;
      queue('users', () => ({ ...landing, ...identity.ids(), device_type, attributes: landing?.attributes ?? {} }));
    }
    return identity.ids();
  };
  const event = (item: object): object => {
    const { anonymousId, userId } = visitor();
    return { userId, anonymousId: userId ? undefined : anonymousId, eventTime: new Date().toISOString(), ...item };
  };

  let referrer = document.referrer;
  let lastUrl = location.href;
  const tracker: Tracker = {
    page: (eventData) => {
      lastUrl = location.href;
      tracker.track({ eventName: 'page_view', eventData: { url: lastUrl, path: location.pathname, referrer, title: document.title, ...eventData } });
    },
    track: (item) => queue('events', () => event(item)),
    identify: ({ userId, attributes, ...profile }) => {
      if (!live()) return;
      const kept = identity.ids().userId;
      if (userId !== undefined && kept !== undefined && kept !== userId) tracker.reset();
      if (userId !== undefined) identity.setUser(String(userId));
      queue('users', () => ({ ...profile, ...visitor(), attributes: attributes ?? {} }));
    },
    product: (item) => queue('products', () => ({ ...item, userId: visitor().userId })),
    productEvent: (item) => queue('productsevents', () => ({ eventTime: new Date().toISOString(), ...item, userId: visitor().userId })),
    reset: () => {
      if (!live()) return;
      identity.reset();
      visitor();
    },
    consent: (decision) => {
      if (refused()) return;
      if (decision === 'denied') off();
      else if (mode !== 'on') {
        start();
        visitor();
      }
    },
    optOut: () => {
      off();
      jar.set(optOutName, '1');
    },
    flush: () => (mode === 'on' ? delivery.flush() : Promise.resolve()),
    stats: () => delivery.stats(),
    get anonymousId() {
      return mode === 'off' ? undefined : identity.ids().anonymousId;
    },
    get userId() {
      return mode === 'off' ? undefined : identity.ids().userId;
    },
  };

  if (refused()) off();
  else {
    if (mode === 'on') start();
    visitor();
  }

  document.addEventListener('visibilitychange', () => (document.visibilityState === 'hidden' ? delivery.hide() : delivery.show()));
  page.addEventListener('pagehide', (event) => (event.persisted ? delivery.suspend() : delivery.hide()));
  page.addEventListener('pageshow', (event) => (event.persisted && mode === 'on' ? delivery.resume() : undefined));
  page.addEventListener('online', () => delivery.online());
  if (options.pageViews === 'history') {
    const changed = (): void => {
      if (location.href === lastUrl) return;
      referrer = lastUrl;
      tracker.page();
    };
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = page.history[name];
      page.history[name] = function (this: HistoryLike, data: unknown, unused: string, url?: string | null) {
        original.call(this, data, unused, url);
        changed();
      };
    }
    page.addEventListener('popstate', changed);
  }
  return tracker;
}
