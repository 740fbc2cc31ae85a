/**
 * The slice of the browser's APIs the tracker uses, declared here rather than taken from lib DOM:
 * the tracker's modules then compile with the Node SDK (no DOM lib), tests hand them fakes, and
 * sdk/tsconfig.browser.json checks against lib DOM that the real globals fit (DomFits below).
 */

/** localStorage, or a Map-backed fake in tests. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  readonly length: number;
  key(index: number): string | null;
}

/** What fetch's reply offers that the tracker reads. */
export interface ReplyLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  json(): Promise<unknown>;
}

/** No headers, ever: a body that is a string goes as text/plain, a CORS simple request (no preflight). */
export type FetchLike = (url: string, init: { method: 'POST'; body: string; keepalive: boolean }) => Promise<ReplyLike>;

/** navigator.locks (Web Locks): `lock` is null when `ifAvailable` found the lock held. */
export interface LocksLike {
  request(name: string, callback: (lock: unknown) => Promise<void>): Promise<void>;
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => Promise<void> | void): Promise<void>;
}

export interface NavigatorLike {
  readonly onLine: boolean;
  readonly userAgent: string;
  readonly maxTouchPoints?: number;
  readonly userAgentData?: { readonly mobile: boolean };
  readonly globalPrivacyControl?: boolean;
  readonly locks?: LocksLike;
  sendBeacon?(url: string, data: string): boolean;
}

export interface DocumentLike {
  cookie: string;
  readonly referrer: string;
  readonly title: string;
  readonly visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
}

export interface LocationLike {
  readonly href: string;
  readonly pathname: string;
  readonly search: string;
  readonly hostname: string;
  readonly protocol: string;
}

/** The two methods the `pageViews: 'history'` option wraps. */
export interface HistoryLike {
  pushState(data: unknown, unused: string, url?: string | null): void;
  replaceState(data: unknown, unused: string, url?: string | null): void;
}

export interface CryptoLike {
  /** Only in secure contexts (https, localhost). */
  randomUUID?(): string;
  getRandomValues<T extends Uint8Array>(array: T): T;
}

/** pagehide's and pageshow's `persisted`: the page goes to, or comes from, the back-forward cache. */
export type WindowListener = (event: { readonly persisted?: boolean }) => void;

/** The globals of a page, as the tracker uses them. */
export interface BrowserGlobals {
  readonly document: DocumentLike;
  readonly location: LocationLike;
  readonly navigator: NavigatorLike;
  readonly history: HistoryLike;
  readonly crypto: CryptoLike;
  /** A getter that throws where storage is blocked (cookies disabled): read through `storageOf`. */
  readonly localStorage: StorageLike;
  fetch: FetchLike;
  addEventListener(type: 'pagehide' | 'pageshow' | 'online' | 'popstate', listener: WindowListener): void;
}

/**
 * Compiled with lib DOM (sdk/tsconfig.browser.json), this requires the real `window` to fit
 * BrowserGlobals, so a wrong declaration above fails the build; without lib DOM (no `document`
 * global) it holds trivially.
 */
type DomFits = typeof globalThis extends { document: unknown } ? (typeof globalThis extends BrowserGlobals ? true : false) : true;
type MustHold<T extends true> = T;
export type DomCheck = MustHold<DomFits>;

/** The page's globals; only touched inside a browser, when a tracker is created. */
export function browserGlobals(): BrowserGlobals {
  return globalThis as unknown as BrowserGlobals;
}

/** localStorage, or null where the browser blocks it (reading it throws) or lacks it. */
export function storageOf(globals: BrowserGlobals): StorageLike | null {
  try {
    return globals.localStorage ?? null;
  } catch {
    return null;
  }
}

/** A random UUID v4: crypto.randomUUID, which needs a secure context, else getRandomValues. */
export function uuidOf(crypto: CryptoLike): string {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
