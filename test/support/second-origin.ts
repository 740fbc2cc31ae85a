import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import type { Credentials, TestApp } from './app.js';

/**
 * Web pages on an origin other than the service's, as a website's are: a static HTTP server on a
 * loopback port of its own (the service's TestApp listens on another), so that every request a
 * page makes to the service is cross-origin and goes through the browser's CORS checks. The
 * browser of these tests keeps its web security (test/support/browser.ts).
 */

interface Served {
  body: string;
  type: string;
}

/** Listens on 127.0.0.1, on a port of the system's choosing; `handle` answers each request. */
async function listen(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(handle);
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => listening());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((closed) => {
    server.close(() => closed());
    server.closeAllConnections();
  });
}

/** A static server of test pages: `http://127.0.0.1:<its port>`. */
export class SecondOrigin {
  private pages = 0;

  private constructor(
    private readonly server: Server,
    private readonly served: Map<string, Served>,
    /** `http://127.0.0.1:<port>`, the origin of its pages (what a browser sends in `Origin`). */
    readonly origin: string,
  ) {}

  static async start(): Promise<SecondOrigin> {
    const served = new Map<string, Served>();
    const { server, port } = await listen((request, response) => {
      const file = served.get(new URL(request.url ?? '/', 'http://any').pathname);
      if (request.method !== 'GET' || !file) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
    });
    return new SecondOrigin(server, served, `http://127.0.0.1:${port}`);
  }

  /** Serves `body` at `path` (a query string is ignored: `/p?n=2` is `/p`) and returns its URL. */
  serve(path: string, body: string, type = 'text/html; charset=utf-8'): string {
    this.served.set(path, { body, type });
    return this.origin + path;
  }

  /** Serves `html` at a path of its own and returns its URL. */
  page(html: string): string {
    this.pages += 1;
    return this.serve(`/page-${this.pages}/`, html);
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

/** A SecondOrigin for the describe block, started before its tests and closed after them. */
export function usesSecondOrigin(use: (origin: SecondOrigin) => void): void {
  let origin: SecondOrigin | undefined;
  before(async () => {
    origin = await SecondOrigin.start();
    use(origin);
  });
  after(async () => {
    await origin?.close();
  });
}

export interface Forwarded {
  /** When it came (Date.now()). */
  at: number;
  method: string;
  /** Path and query string, as the client sent them. */
  url: string;
  headers: IncomingMessage['headers'];
  /** Whether it was dropped (`dropping` was set) rather than forwarded. */
  dropped: boolean;
  /** The service's answer, once it came: its status and headers. */
  reply?: { status: number; headers: IncomingMessage['headers'] };
}

/**
 * An HTTP relay in front of the service, on a port of its own: every request made to it is
 * recorded in `seen` (the preflights the service got, say, which a page's request events never
 * show, nor a beacon), then forwarded as it came and answered as the service answered; while
 * `dropping` is set it is dropped instead, its connection closed unanswered, as a network that
 * went away does. Route interception cannot stand in for it there: a beacon a page sends as it
 * closes passes by the routes of its page and of its context.
 */
export class CountingRelay {
  private constructor(
    private readonly server: Server,
    /** Every request it got, in order. */
    readonly seen: Forwarded[],
    /** `http://127.0.0.1:<port>`: a page uses it as the service's base URL. */
    readonly baseUrl: string,
  ) {}

  /** While true, requests are dropped unanswered, never forwarded. */
  dropping = false;

  static async start(target: string): Promise<CountingRelay> {
    const { hostname, port } = new URL(target);
    const made: { relay?: CountingRelay } = {};
    const { server, port: own } = await listen((request, response) => {
      const dropped = made.relay?.dropping ?? false;
      const seen: Forwarded = { at: Date.now(), method: request.method ?? '', url: request.url ?? '', headers: request.headers, dropped };
      made.relay?.seen.push(seen);
      if (dropped) {
        request.socket.destroy();
        return;
      }
      const upstream = forward({ host: hostname, port, method: request.method, path: request.url, headers: request.headers }, (reply) => {
        seen.reply = { status: reply.statusCode ?? 0, headers: reply.headers };
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      });
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    });
    made.relay = new CountingRelay(server, [], `http://127.0.0.1:${own}`);
    return made.relay;
  }

  /** The requests it got to ingest routes (`/v1/...`) with `method`. */
  ingest(method = 'POST'): Forwarded[] {
    return this.seen.filter((request) => request.method === method && request.url.startsWith('/v1/'));
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

/** A browser key of `account` made through the API (`POST .../browser-keys`), bound to `origins`. */
export async function createBrowserKey(app: TestApp, account: Credentials, origins: string[], label = 'test page'): Promise<string> {
  const reply = await app.request<{ browserKey?: string }>('POST', `/admin/v1/accounts/${account.licenseCode}/browser-keys`, { label, origins }, {
    authorization: `Bearer ${account.accessToken}`,
  });
  if (reply.status !== 201 || typeof reply.body.browserKey !== 'string') {
    throw new Error(`POST browser-keys: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  return reply.body.browserKey;
}

/** Options of the browser SDK's createTracker (docs/browser.md), less `onError`, which the page sets. */
export interface TrackerOptions {
  baseUrl: string;
  licenseCode: string;
  browserKey: string;
  consent?: 'granted' | 'pending';
  globalPrivacyControl?: 'honour' | 'ignore';
  pageViews?: 'history';
}

/** `value` as a JavaScript literal that may stand inside a <script> element. */
export const literal = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * A page that imports the browser SDK as a website does (by default from the service's
 * `/sdk/tracking.mjs`), makes `window.tracker` with `options`, collects what the SDK reports to
 * `onError` in `window.trackerErrors`, then runs `script` (module code: it may await).
 */
export function trackerPage(options: TrackerOptions, script = '', sdk = `${options.baseUrl}/sdk/tracking.mjs`): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A shop</title><link rel="icon" href="data:,"></head>
<body><h1>A shop</h1>
<script type="module">
import { createTracker } from ${literal(sdk)};
window.trackerErrors = [];
window.tracker = createTracker({ ...${literal(options)}, onError: (message) => window.trackerErrors.push(String(message)) });
${script}
</script></body></html>`;
}

/** A page of the site without the SDK (to look at or clear its storage while no tracker runs). */
export const plainPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plain</title><link rel="icon" href="data:,"></head><body>plain</body></html>`;

/**
 * Makes every page of the context record, as it happens, each `fetch` and `navigator.sendBeacon`
 * its scripts call (`window.sends`: `{ via, url }`), so that a test can tell synchronously whether
 * a call of the SDK sent something (a page's request events never show a beacon, and come later).
 */
export async function recordSends(context: BrowserContext): Promise<void> {
  await context.addInitScript({
    content: `window.sends = [];
{
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    window.sends.push({ via: 'fetch', url: String(input instanceof Request ? input.url : input) });
    return fetch.call(this, input, init);
  };
  const beacon = Navigator.prototype.sendBeacon;
  Navigator.prototype.sendBeacon = function (url, data) {
    window.sends.push({ via: 'beacon', url: String(url) });
    return beacon.call(this, url, data);
  };
}`,
  });
}

/**
 * Makes every page of the context count the `fetch` and `navigator.sendBeacon` calls its scripts
 * make to ingest routes (`/v1/`) in sessionStorage (`test:sends`), which outlives the page as its
 * tab navigates: what all the pages of a visit sent, beacons of pages gone too.
 */
export async function countSendsOfTab(context: BrowserContext): Promise<void> {
  await context.addInitScript({
    content: `{
  const count = (url) => {
    if (String(url).includes('/v1/')) sessionStorage.setItem('test:sends', String(Number(sessionStorage.getItem('test:sends') ?? 0) + 1));
  };
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    count(input instanceof Request ? input.url : input);
    return fetch.call(this, input, init);
  };
  const beacon = Navigator.prototype.sendBeacon;
  Navigator.prototype.sendBeacon = function (url, data) {
    count(url);
    return beacon.call(this, url, data);
  };
}`,
  });
}

/** What countSendsOfTab counted in the page's tab. */
export const sendsOfTab = (page: Page): Promise<number> => inPage<number>(page, "return Number(sessionStorage.getItem('test:sends') ?? 0);");

/** Runs `code` in the page as the body of an async function (the page's globals in scope) and gives what it returns. */
export function inPage<T = unknown>(page: Page, code: string): Promise<T> {
  return page.evaluate<T>(`(async () => { ${code} })()`);
}

/** Opens `url` and waits until its tracker is made; fails naming the page's errors when the SDK did not load. */
export async function openTracker(page: Page, url: string, problems: string[] = []): Promise<void> {
  await page.goto(url);
  const made = await page
    .waitForFunction('window.tracker !== undefined', undefined, { timeout: 5_000 })
    .then(() => true, () => false);
  if (!made) throw new Error(`the page made no tracker (did the SDK load?): ${problems.join('; ') || 'no error reported'}`);
}

/** The value of the cookie `name` of the context, URL-decoded; undefined when there is none. */
export async function cookie(context: BrowserContext, name: string): Promise<string | undefined> {
  const found = (await context.cookies()).find((c) => c.name === name);
  return found === undefined ? undefined : decodeURIComponent(found.value);
}

/** The page's localStorage as an object of its keys and values. */
export const localStorageOf = (page: Page): Promise<Record<string, string>> => inPage(page, 'return { ...localStorage };');

export type PageReply =
  | { failed: false; status: number; body: unknown; headers: Record<string, string | null> }
  | { failed: true; error: string };

export interface PageRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The body is `{"eventName":"big","eventData":{"pad":"xxx..."}}` padded to this many bytes, made in the page. */
  paddedTo?: number;
}

/**
 * `fetch` from the page, as its own scripts would: the reply's status, its body (JSON when it is)
 * and the reply headers named in `read` as the page can read them (null when CORS hides them), or
 * why the fetch failed (a CORS refusal, a network error).
 */
export function fetchFromPage(page: Page, request: PageRequest, read: string[] = []): Promise<PageReply> {
  return page.evaluate(
    async ({ request, read }): Promise<PageReply> => {
      const body =
        request.paddedTo === undefined
          ? request.body
          : (() => {
              const head = '{"eventName":"big","eventData":{"pad":"';
              const tail = '"}}';
              return head + 'x'.repeat(Math.max(0, (request.paddedTo ?? 0) - head.length - tail.length)) + tail;
            })();
      try {
        const response = await fetch(request.url, { method: request.method ?? 'POST', headers: request.headers ?? {}, body });
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        return { failed: false, status: response.status, body: parsed, headers: Object.fromEntries(read.map((name) => [name, response.headers.get(name)])) };
      } catch (error) {
        return { failed: true, error: String(error) };
      }
    },
    { request, read },
  );
}

/** One item of Live events (docs/api.md), the fields these tests look at. */
export interface LiveItem {
  trackID: string;
  kind: string;
  eventType: string;
  name: string | null;
  userId: string | null;
  anonymousId: string | null;
  preview: string | null;
}

/** Live events of `account` (`GET /admin/v1/accounts/<license>/live?limit=200&<query>`), newest first. */
export async function liveItems(app: TestApp, account: Credentials, query = ''): Promise<LiveItem[]> {
  const reply = await app.get<{ items: LiveItem[] }>(`/admin/v1/accounts/${account.licenseCode}/live?limit=200${query ? `&${query}` : ''}`, `Bearer ${account.accessToken}`);
  if (reply.status !== 200) throw new Error(`live: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.items;
}

/** A read call of `account` (`/admin/v1/accounts/<license><path>`) that must answer 200: its body. */
export async function readApi<T>(app: TestApp, account: Credentials, path: string): Promise<T> {
  const reply = await app.get<T>(`/admin/v1/accounts/${account.licenseCode}${path}`, `Bearer ${account.accessToken}`);
  if (reply.status !== 200) throw new Error(`${path}: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}
