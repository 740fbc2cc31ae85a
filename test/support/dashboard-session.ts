import type { Page } from 'playwright-core';
import { adminToken, type Credentials } from './app.js';

/**
 * Signing in to the dashboard through its sign-in form, as a person would. Before the sign-in, the
 * app's check of the session answers 401, which the browser logs as a failed load: pass
 * `signInFailedLoads` to openPage's expectedFailedLoads.
 */
export const signInFailedLoads = ['/admin/v1/session'];

/** Opens `path` (default the dashboard's start) and signs in there as the owner of `account`. */
export async function signInAsAccount(page: Page, baseUrl: string, account: Credentials, path = '/dashboard'): Promise<void> {
  await page.goto(baseUrl + path);
  await page.getByLabel('License code').fill(account.licenseCode);
  await page.getByLabel('Access token').fill(account.accessToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Opens `path` and signs in there as an operator; then picks the account `license`, if given. */
export async function signInAsOperator(page: Page, baseUrl: string, path = '/dashboard', license?: string): Promise<void> {
  await page.goto(baseUrl + path);
  await page.getByLabel('Operator').check();
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  if (license) {
    const picker = page.getByLabel('Account', { exact: true });
    await picker.locator(`option[value="${license}"]`).waitFor({ state: 'attached' });
    await picker.selectOption(license);
  }
}

/** The names of the cookies the browser holds for the page's site. */
export async function cookieNames(page: Page): Promise<string[]> {
  return (await page.context().cookies()).map((cookie) => cookie.name);
}
