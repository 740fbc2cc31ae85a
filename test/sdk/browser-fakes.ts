// Fakes of the page's APIs for the browser SDK's unit tests: storage, Web Locks, fetch, a clock,
// cookies with the browser's domain rules, and a whole page (BrowserGlobals).
import { webcrypto } from 'node:crypto';
import type { BrowserGlobals, DeliveryEnv, LocksLike, ReplyLike, StorageLike } from '@tracking-ingestion/sdk/browser/internals';

/** localStorage over a Map; `writes` counts setItem calls. */
export class MemoryStorage implements StorageLike {
  readonly entries = new Map<string, string>();
  writes = 0;
  get length(): number {
    return this.entries.size;
  }
  key(index: number): string | null {
    return [...this.entries.keys()][index] ?? null;
  }
  getItem(key: string): string | null {
    return this.entries.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.writes += 1;
    this.entries.set(key, value);
  }
  removeItem(key: string): void {
    this.entries.delete(key);
  }
}

/** Web Locks of one origin, shared by the fake tabs that are given it. */
export class FakeLocks implements LocksLike {
  readonly held = new Set<string>();

  request(name: string, callback: (lock: unknown) => Promise<void>): Promise<void>;
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => Promise<void> | void): Promise<void>;
  async request(
    name: string,
    second: { ifAvailable: boolean } | ((lock: unknown) => Promise<void>),
    third?: (lock: unknown) => Promise<void> | void,
  ): Promise<void> {
    const callback = typeof second === 'function' ? second : (third as (lock: unknown) => Promise<void> | void);
    const ifAvailable = typeof second === 'function' ? false : second.ifAvailable;
    await Promise.resolve(); // granted asynchronously, as in a browser
    if (this.held.has(name)) {
      if (ifAvailable) return callback(null);
      throw new Error(`FakeLocks: ${name} is held and waiting is not faked`);
    }
    this.held.add(name);
    try {
      await callback({ name });
    } finally {
      this.held.delete(name);
    }
  }
}

/** A clock whose timers run only when the test advances it. */
export class FakeClock {
  now = Date.parse('2026-01-05T10:00:00Z');
  private timers: { at: number; run: () => void; id: number }[] = [];
  private nextId = 0;

  later = (ms: number, run: () => void): (() => void) => {
    const id = (this.nextId += 1);
    this.timers.push({ at: this.now + ms, run, id });
    return () => {
      this.timers = this.timers.filter((timer) => timer.id !== id);
    };
  };

  /** Moves time on by `ms`, running each timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.now = Math.max(this.now, due.at);
      due.run();
      await settle();
    }
    this.now = end;
    await settle();
  }
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let round = 0; round < 20; round += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

export interface Sent {
  url: string;
  body: string;
  keepalive: boolean;
  /** The origin's storage as it was when the request left. */
  stored: Map<string, string>;
}

/** A reply of the fake service. */
export interface FakeReply {
  status: number;
  body?: unknown;
  retryAfter?: string;
}

/** The bulk reply storing every item of a body. */
export function queuedReply(body: string): FakeReply {
  const items = JSON.parse(body) as unknown[];
  return { status: 200, body: { response: items.map((_, index) => ({ status: 'queued', trackID: `t-${index}` })) } };
}

/** fetch of a fake service: records each request, answers with `reply` (or throws, a network error, when it gives null). */
export class FakeService {
  readonly sent: Sent[] = [];
  reply: (body: string, url: string) => FakeReply | null = queuedReply;

  constructor(private readonly storage: MemoryStorage) {}

  fetch = async (url: string, init: { method: 'POST'; body: string; keepalive: boolean }): Promise<ReplyLike> => {
    this.sent.push({ url, body: init.body, keepalive: init.keepalive, stored: new Map(this.storage.entries) });
    const reply = this.reply(init.body, url);
    if (!reply) throw new TypeError('Failed to fetch');
    return {
      status: reply.status,
      headers: { get: (name: string) => (name.toLowerCase() === 'retry-after' ? (reply.retryAfter ?? null) : null) },
      json: async () => reply.body ?? null,
    };
  };

  /** The Idempotency-Key of each request, in order. */
  keys(): string[] {
    return this.sent.map((request) => new URL(request.url).searchParams.get('idempotencyKey') ?? '');
  }
}

let uuids = 0;
/** Distinct, readable UUID-shaped ids. */
export function testUuid(): string {
  uuids += 1;
  return `00000000-0000-4000-8000-${String(uuids).padStart(12, '0')}`;
}

/** What a Delivery needs, over the fakes; `errors` collects onError's messages. */
export function deliveryEnv(storage: MemoryStorage, locks: FakeLocks | undefined, clock: FakeClock, service: FakeService, errors: string[] = []): DeliveryEnv {
  return {
    storage,
    fetch: service.fetch,
    beacon: () => false,
    locks,
    online: () => true,
    uuid: testUuid,
    now: () => clock.now,
    later: clock.later,
    random: () => 0.5,
    allowed: () => true,
    onError: (message) => errors.push(message),
  };
}

/** Cookies as a browser keeps them for one host: a Domain attribute is taken only on a registrable domain of the host. */
export class CookieDocument {
  readonly cookies = new Map<string, { value: string; domain: string | undefined }>();
  /** Every assignment to document.cookie, in order. */
  readonly assignments: string[] = [];
  referrer = 'https://search.example/';
  title = 'Shop';
  visibilityState = 'visible';
  readonly listeners = new Map<string, (() => void)[]>();

  constructor(private readonly hostname: string, private readonly publicSuffixes = ['com', 'uk', 'co.uk', 'example']) {}

  get cookie(): string {
    return [...this.cookies].map(([name, { value }]) => `${name}=${value}`).join('; ');
  }

  set cookie(text: string) {
    this.assignments.push(text);
    const [pair = '', ...attributes] = text.split(';').map((part) => part.trim());
    const equals = pair.indexOf('=');
    const name = pair.slice(0, equals);
    const attribute = (key: string): string | undefined => attributes.find((part) => part.toLowerCase().startsWith(`${key}=`))?.split('=')[1];
    const domain = attribute('domain');
    if (domain !== undefined && (this.publicSuffixes.includes(domain) || !(this.hostname === domain || this.hostname.endsWith(`.${domain}`)))) return;
    if (Number(attribute('max-age') ?? '1') <= 0) this.cookies.delete(name);
    else this.cookies.set(name, { value: pair.slice(equals + 1), domain });
  }

  addEventListener(type: string, listener: () => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
}

/** A page of `url` (fake document, storage, locks, service), and its window's listeners. */
export class FakePage {
  readonly document: CookieDocument;
  readonly storage: MemoryStorage;
  readonly service: FakeService;
  readonly listeners = new Map<string, ((event: { persisted?: boolean }) => void)[]>();
  readonly navigator: { onLine: boolean; userAgent: string; globalPrivacyControl?: boolean; locks?: LocksLike; sendBeacon?(url: string, data: string): boolean };
  url: URL;
  readonly globals: BrowserGlobals;

  constructor(url: string, options: { storage?: MemoryStorage; document?: CookieDocument; locks?: FakeLocks; userAgent?: string; gpc?: boolean } = {}) {
    this.url = new URL(url);
    this.document = options.document ?? new CookieDocument(this.url.hostname);
    this.storage = options.storage ?? new MemoryStorage();
    this.service = new FakeService(this.storage);
    this.navigator = {
      onLine: true,
      userAgent: options.userAgent ?? 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36',
      globalPrivacyControl: options.gpc,
      locks: options.locks ?? new FakeLocks(),
    };
    const current = (): URL => this.url;
    this.globals = {
      document: this.document,
      // Live, as window.location is.
      location: {
        get href() {
          return current().href;
        },
        get pathname() {
          return current().pathname;
        },
        get search() {
          return current().search;
        },
        get hostname() {
          return current().hostname;
        },
        get protocol() {
          return current().protocol;
        },
      },
      navigator: this.navigator,
      history: {
        pushState: (_data, _unused, to) => {
          if (to) this.url = new URL(to, this.url);
        },
        replaceState: (_data, _unused, to) => {
          if (to) this.url = new URL(to, this.url);
        },
      },
      crypto: webcrypto as unknown as BrowserGlobals['crypto'],
      localStorage: this.storage,
      fetch: this.service.fetch,
      addEventListener: (type, listener) => this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]),
    };
  }

  dispatch(type: string, event: { persisted?: boolean } = {}): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  /** The items of every request to `kind`, parsed. */
  items(kind: string): Record<string, unknown>[] {
    return this.service.sent.filter((request) => request.url.includes(`/${kind}/bulk`)).flatMap((request) => JSON.parse(request.body) as Record<string, unknown>[]);
  }
}
