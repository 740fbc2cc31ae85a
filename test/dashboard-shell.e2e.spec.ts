import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { dashboardCspDirectives, dashboardRoutes } from '../src/http/dashboard-routes.js';
import { servedApp, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';

/** What the app's pages ask the server on their own before anyone signs in. */
const sessionPath = '/admin/v1/session';

/** The id of the element that has the keyboard focus ('' for none or one without an id). */
const focusedId = (page: Page) => page.evaluate('document.activeElement ? document.activeElement.id : ""');

/** A Content-Security-Policy header as its directives: { 'img-src': ["'self'", 'data:'], ... } */
function directivesOf(header: string | null): Record<string, string[]> {
  const entries = (header ?? '').split(';').map((directive) => directive.trim().split(/\s+/));
  return Object.fromEntries(entries.filter((words) => words[0]).map(([name, ...values]) => [name as string, values]));
}

/** Presses Tab `times` times; the id of the element focused then. */
async function tabTo(page: Page, times = 1): Promise<unknown> {
  for (let i = 0; i < times; i++) await page.keyboard.press('Tab');
  return focusedId(page);
}

describe('dashboard shell (e2e)', () => {
  let app: TestApp;
  let browser: Browser;
  servedApp((started) => ({ app } = started), { scope: 'suite' });
  usesBrowser((launched) => (browser = launched));

  async function assetPaths(): Promise<string[]> {
    const html = await (await fetch(`${app.baseUrl}/dashboard`)).text();
    return [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((match) => match[1] as string);
  }

  it('redirects / to /dashboard', async () => {
    const reply = await fetch(`${app.baseUrl}/`, { redirect: 'manual' });
    expect(reply.status).to.equal(302);
    expect(reply.headers.get('location')).to.equal('/dashboard');
  });

  it('serves index.html at /dashboard and every path under it, never cached, with the CSP and security headers', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/leads', '/dashboard/leads/some%20lead']) {
      const reply = await fetch(app.baseUrl + path);
      expect(reply.status, path).to.equal(200);
      expect(reply.headers.get('content-type'), path).to.match(/^text\/html/);
      expect(reply.headers.get('cache-control'), path).to.equal('no-cache');
      expect(directivesOf(reply.headers.get('content-security-policy')), path).to.deep.equal(dashboardCspDirectives);
      expect(reply.headers.get('x-content-type-options'), path).to.equal('nosniff');
      expect(reply.headers.get('referrer-policy'), path).to.equal('no-referrer');
      expect(reply.headers.get('x-frame-options'), path).to.equal('DENY');
      expect(await reply.text(), path).to.include('<div id="app">');
    }
  });

  it('has nothing inline in index.html: its scripts and styles are files under /dashboard/assets/', async () => {
    const html = await (await fetch(`${app.baseUrl}/dashboard`)).text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    expect(scripts).to.have.length.above(0);
    for (const tag of scripts) expect(tag).to.match(/ src="\/dashboard\/assets\/[^"]+\.js"/);
    expect(html).not.to.match(/<style\b/);
    expect(html).not.to.match(/\sstyle=/);
    expect(html).to.match(/<link rel="stylesheet"[^>]* href="\/dashboard\/assets\/[^"]+\.css"/);
  });

  it('serves the built assets for a year, with the CSP and nosniff; an unknown one is a form A 404', async () => {
    const paths = await assetPaths();
    expect(paths.some((path) => path.endsWith('.js'))).to.equal(true);
    for (const path of paths) {
      const reply = await fetch(app.baseUrl + path);
      expect(reply.status, path).to.equal(200);
      expect(reply.headers.get('cache-control'), path).to.equal('public, max-age=31536000, immutable');
      expect(directivesOf(reply.headers.get('content-security-policy')), path).to.deep.equal(dashboardCspDirectives);
      expect(reply.headers.get('x-content-type-options'), path).to.equal('nosniff');
      expect(reply.headers.get('content-type'), path).to.match(path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
    const missing = await app.get('/dashboard/assets/missing-0000.js');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ error: 'no such dashboard file', code: 404 });
  });

  it('keeps the JSON API 404s in form A', async () => {
    const reply = await app.get('/admin/v1/no-such-thing');
    expect(reply.status).to.equal(404);
    expect(reply.body).to.have.all.keys('error', 'code');
  });

  it('answers 503 with a text that says to build it when the dashboard is not built', async () => {
    const server = await new Promise<Server>((resolve) => {
      const s = express()
        .use(dashboardRoutes('/nonexistent/dashboard/dist'))
        .listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const reply = await fetch(`http://127.0.0.1:${port}/dashboard/leads`);
      expect(reply.status).to.equal(503);
      expect(reply.headers.get('content-type')).to.match(/^text\/plain/);
      expect(await reply.text()).to.include('npm run build');
    } finally {
      server.close();
    }
  });

  for (const width of [1280, 400]) {
    it(`shows the sign-in page at ${width} px, with labelled fields, without console errors or CSP violations`, async () => {
      const { page, expectNoProblems, close } = await openPage(browser, { width, expectedFailedLoads: [sessionPath] });
      try {
        await page.goto(`${app.baseUrl}/`);
        expect(new URL(page.url()).pathname).to.equal('/dashboard');
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        expect(await page.getByLabel('License code').isVisible()).to.equal(true);
        expect(await page.getByLabel('Access token').isVisible()).to.equal(true);
        expect(await page.getByLabel('Access token').getAttribute('type')).to.equal('password');
        await screenshot(page, `sign-in-${width}`);

        await page.getByLabel('Operator').check();
        expect(await page.getByLabel('Admin token').isVisible()).to.equal(true);
        expect(await page.getByLabel('License code').count()).to.equal(0);
        await screenshot(page, `sign-in-operator-${width}`);
        // Nothing wider than the window: no sideways scrolling.
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        expectNoProblems();
      } finally {
        await close();
      }
    });
  }

  it('reaches the fields and the button with Tab, and shows a refused sign-in as text', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: [sessionPath] });
    try {
      await page.goto(`${app.baseUrl}/dashboard`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      // The radio group (one stop), then the two fields, then the button.
      expect(await tabTo(page)).to.equal('');
      expect(await page.evaluate('document.activeElement.type')).to.equal('radio');
      expect(await tabTo(page)).to.equal('license-code');
      await page.keyboard.type('<b>not-a-license</b>');
      expect(await tabTo(page)).to.equal('access-token');
      await page.keyboard.type('wrong token');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).to.equal('Sign in');
      await page.keyboard.press('Enter');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect((await alert.textContent())?.trim()).to.have.length.above(0);
      // A refusal leaves the form there, to try again.
      expect(await page.getByLabel('License code').inputValue()).to.equal('<b>not-a-license</b>');
      await screenshot(page, 'sign-in-refused-1280');
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
