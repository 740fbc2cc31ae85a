import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AccountDirectory, Authenticated } from '../accounts/directory.js';
import type { AuthenticatedBrowserKey, BrowserKeyRegistry } from '../accounts/browser-key-registry.js';
import { isBrowserKeyLike } from '../accounts/browser-keys.js';
import { normalizedOrigin, originAllowed } from '../accounts/origins.js';
import { accessTokenPrefix } from '../config.js';
import { AppError, badRequest, unauthorized } from '../errors.js';
import { presentedToken } from './auth.js';

/** What a request to an ingest route was refused for, as counted in Warnings (docs/browser.md). */
export const refused = {
  unauthorized: (message: string) => unauthorized(message),
  secretInUrl: () =>
    new AppError(
      401,
      'an access token is secret and must never be sent in a URL (query parameter key): send it in the Authorization header, and rotate it now, since the URL may have been logged on its way; a web page uses a browser key',
      'request',
      'secret_in_url',
    ),
  tokenInPage: (origin: string) =>
    new AppError(
      403,
      `an access token is secret and must not be used from a web page (Origin ${origin}): anyone who opens the page can read it; a web page uses a browser key, bound to its origins`,
      'request',
      'access_token_in_page',
    ),
  noOrigin: () =>
    new AppError(403, 'a browser key is accepted only from a web page of its allowed origins: the request has no Origin header', 'request', 'origin_not_allowed'),
  originNotAllowed: (origin: string) => new AppError(403, `origin ${origin} is not allowed for this browser key`, 'request', 'origin_not_allowed'),
};

/** The credential of an ingest request: the Authorization header's token, or the query parameter `key`. */
function credentialOf(req: Request): { value: string; inQuery: boolean } | null {
  const header = presentedToken(req.get('authorization'));
  const query: unknown = req.query.key;
  if (query === undefined) return header === null ? null : { value: header, inQuery: false };
  if (typeof query !== 'string' || query === '') throw badRequest('query parameter key must be given once, and not empty');
  if (header !== null && header !== query) throw badRequest('send the credential in the Authorization header or in the query parameter key, not both');
  return { value: query, inQuery: true };
}

/** The Origin header as sent, shortened for a message (it is the client's text). */
const shownOrigin = (origin: string): string => (origin.length > 200 ? `${origin.slice(0, 200)}…` : origin);

/**
 * A browser key's request: its account once the Origin is one of the key's (res.locals.account,
 * browserKeyId); otherwise refused, with its account noted for Warnings (refusedAccount).
 */
export function admitBrowserKey(res: Response, origin: string | undefined, found: AuthenticatedBrowserKey | null, unknown: string): void {
  if (!found) throw refused.unauthorized(unknown);
  res.locals.refusedAccount = found.account;
  if (origin === undefined) throw refused.noOrigin();
  const normalized = normalizedOrigin(origin);
  if (!normalized || !originAllowed(normalized, found.origins)) throw refused.originNotAllowed(shownOrigin(origin));
  res.locals.account = found.account;
  res.locals.browserKeyId = found.keyId;
}

/** An access token's request: its account when it comes from a server (no Origin); otherwise refused. */
export function admitAccessToken(res: Response, origin: string | undefined, found: Authenticated | null, unknown: string): void {
  if (!found) throw refused.unauthorized(unknown);
  res.locals.refusedAccount = found.account;
  if (origin !== undefined) throw refused.tokenInPage(shownOrigin(origin));
  res.locals.account = found.account;
}

/**
 * Ingest authentication (docs/spec.md 5, docs/browser.md): license code in the path, and either an
 * access token of that account (either scope) from a server, or a browser key of that account from
 * a page of one of the key's origins. Never a cookie. A refusal (401, 403) of a license code that
 * names an account is counted in that account's Warnings (res.locals.refusedAccount).
 */
export function ingestAuth(accounts: AccountDirectory, browserKeys: BrowserKeyRegistry): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const license = req.params.license;
    if (typeof license !== 'string') throw refused.unauthorized('missing access token');
    try {
      const credential = credentialOf(req);
      if (!credential) throw refused.unauthorized('missing access token');
      const origin = req.get('origin');
      if (isBrowserKeyLike(credential.value)) {
        admitBrowserKey(res, origin, await browserKeys.authenticate(license, credential.value), 'invalid browser key or license code');
        return next();
      }
      if (credential.inQuery && credential.value.startsWith(accessTokenPrefix)) throw refused.secretInUrl();
      if (credential.inQuery) throw refused.unauthorized('invalid browser key or license code');
      admitAccessToken(res, origin, await accounts.authenticate(license, credential.value), 'invalid access token or license code');
      next();
    } catch (error) {
      // The refusal is the owner's to see when the license code names an account (cached lookup).
      if (error instanceof AppError && (error.status === 401 || error.status === 403) && res.locals.refusedAccount === undefined) {
        res.locals.refusedAccount = (await accounts.find(license).catch(() => null)) ?? undefined;
      }
      throw error;
    }
  };
}
