import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import chromium, { inflate } from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../src/paths.js';

/** Where screenshot() saves its PNGs (gitignored). */
export const screenshotsDir = resolve(projectRoot, 'test-artifacts', 'screenshots');

// chromium.args, less the flags of its serverless setting that would switch off the web security
// the tests check (same-origin policy, mixed content), and --single-process, with which the whole
// browser goes when a test closes its context.
const droppedFlags = new Set(['--disable-web-security', '--allow-running-insecure-content', '--single-process']);
const quietFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Runs an unpacking of @sparticuz/chromium with `folder` as os.tmpdir(), which it unpacks into. */
async function unpackInto(folder: string, unpack: () => Promise<string>): Promise<void> {
  const previous = process.env.TMPDIR;
  // The package takes its target from os.tmpdir() synchronously, before its first await.
  process.env.TMPDIR = folder;
  let unpacking: Promise<string>;
  try {
    unpacking = unpack();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  await unpacking;
}

/** Unpacks into a fresh folder renamed to `target` at the end: a run starting meanwhile never sees half a file. */
async function unpackOnce(target: string, unpack: (folder: string) => Promise<void>): Promise<void> {
  if (existsSync(target)) return;
  const partial = mkdtempSync(`${target}.partial-`);
  try {
    await unpack(partial);
    renameSync(partial, target);
  } catch (error) {
    if (!existsSync(target)) throw error;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * The Chromium binary of @sparticuz/chromium, unpacked once per package version and user into a
 * folder of the temporary directory (its own `executablePath()` would unpack into the shared
 * temporary directory itself, where another user's or another version's copy may already sit),
 * with the env a launch needs: where the machine lacks the NSS libraries, the ones the package ships.
 */
async function chromiumBinary(): Promise<{ executablePath: string; env: Record<string, string> }> {
  const packageDir = dirname(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const dir = join(tmpdir(), `tracking-chromium-${version}-${process.getuid?.() ?? 'user'}`);
  await unpackOnce(dir, (folder) => unpackInto(folder, () => chromium.executablePath()));
  const executablePath = join(dir, 'chromium');
  const env: Record<string, string> = {};
  if (execFileSync('ldd', [executablePath], { encoding: 'utf8' }).includes('not found')) {
    const libs = join(dir, 'al2023');
    await unpackOnce(libs, async (folder) => {
      await unpackInto(folder, () => inflate(join(packageDir, 'bin', 'al2023.tar.br')));
      renameSync(join(folder, 'al2023'), join(folder, 'unpacked'));
    });
    env.LD_LIBRARY_PATH = [join(libs, 'unpacked', 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  }
  return { executablePath, env };
}

/** Headless Chromium, as root or not (no sandbox), with its own fresh profile (Playwright's). */
export async function launchBrowser(): Promise<Browser> {
  const { executablePath, env } = await chromiumBinary();
  const args = [...chromium.args.filter((flag) => !droppedFlags.has(flag) && !flag.startsWith('--headless')), ...quietFlags];
  return playwright.launch({ executablePath, args, headless: true, env: { ...process.env, ...env }, timeout: 60_000 });
}

/**
 * One browser for the test file (describe block): launched before its tests, closed after them.
 * `use` receives it: `usesBrowser((b) => (browser = b))`.
 */
export function usesBrowser(use: (browser: Browser) => void): void {
  let browser: Browser | undefined;
  before(async function () {
    this.timeout(120_000);
    browser = await launchBrowser();
    use(browser);
  });
  after(async () => {
    await browser?.close();
  });
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  problems: string[];
  /** Fails the test when there was any problem. */
  expectNoProblems(): void;
  close(): Promise<void>;
}

export interface PageOptions {
  width?: number;
  height?: number;
  /**
   * Paths (e.g. '/admin/v1/session') whose 4xx replies are expected: the browser logs each as a
   * console error "Failed to load resource", which is no problem for them.
   */
  expectedFailedLoads?: string[];
  /** The browser's time zone (IANA name); the machine's when not given. */
  timezoneId?: string;
  /** What `navigator.language` says, even a tag Intl refuses ('en-US@posix', as under LANG=C). */
  language?: string;
}

const reportViolations = `document.addEventListener('securitypolicyviolation', (event) => {
  console.error('CSP violation: ' + event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline'));
});`;

/**
 * A page in a fresh context (no cookies of another test) that records every console error,
 * uncaught exception and Content-Security-Policy violation; expectNoProblems() fails on any.
 */
export async function openPage(browser: Browser, options: PageOptions = {}): Promise<WatchedPage> {
  // A locale of its own: under LANG=C the browser's language would be 'en-US@posix', a tag Intl
  // refuses (uPlot formats numbers in the browser's language).
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    locale: 'en-US',
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  const page = await context.newPage();
  if (options.language !== undefined) {
    // Before any script of the page runs; defined on the prototype, as the browser's own is.
    await page.addInitScript({
      content: `Object.defineProperty(Navigator.prototype, 'language', { get: () => ${JSON.stringify(options.language)}, configurable: true });`,
    });
  }
  const problems: string[] = [];
  const expected = options.expectedFailedLoads ?? [];
  await page.addInitScript({ content: reportViolations });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    if (text.startsWith('Failed to load resource')) {
      const url = message.location().url;
      if (url && expected.includes(new URL(url).pathname)) return;
    }
    problems.push(`console error: ${text} (${message.location().url || 'no url'})`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return {
    context,
    page,
    problems,
    expectNoProblems() {
      if (problems.length > 0) throw new Error(`the page reported problems:\n${problems.join('\n')}`);
    },
    close: () => context.close(),
  };
}

/**
 * Saves a PNG of the page as test-artifacts/screenshots/<name>.png and returns its path: the whole
 * page, or with `viewport` what a screen shows (a page as long as the API reference takes Chromium
 * tens of seconds to paint whole, more the longer the document grows).
 */
export async function screenshot(page: Page, name: string, { viewport = false } = {}): Promise<string> {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-' only`);
  mkdirSync(screenshotsDir, { recursive: true });
  const path = join(screenshotsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: !viewport });
  return path;
}
