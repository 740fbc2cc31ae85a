import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Account } from '../accounts/account.js';
import type { AccountDirectory } from '../accounts/directory.js';
import { forbidden, notFound, unauthorized } from '../errors.js';
import type { Session, SessionStore } from '../accounts/sessions.js';
import { hashToken, tokenMatches } from '../accounts/token-hash.js';
import { accessTokenPrefix } from '../config.js';
import { isBrowserKeyLike } from '../accounts/browser-keys.js';
import type { AdminTokenGuesses } from './sign-in-limit.js';

/** The cookie that holds a dashboard session id. */
export const sessionCookie = 'tracking_session';

/** The token of an Authorization header: bare, or after the scheme word `Bearer` (any case). */
export function presentedToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^bearer\s+(.+)$/i.exec(header.trim());
  const token = (match?.[1] ?? header).trim();
  return token === '' ? null : token;
}

/** The value of the session cookie, or null. Other cookies are ignored. */
export function sessionIdOf(req: Pick<Request, 'headers'>): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== sessionCookie) continue;
    const value = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    return value === '' ? null : value;
  }
  return null;
}

/**
 * A request that changes something with a cookie must come from this service's own pages: a
 * present Origin header must name this host. (SameSite=Strict already keeps the cookie off most
 * cross-site requests; this also covers browsers and subdomains it does not.) The host alone is
 * compared, so that a TLS-terminating proxy in front does not make every origin look foreign.
 */
export function refuseForeignOrigin(req: Request): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
  const origin = req.get('origin');
  if (origin === undefined) return;
  let originHost: string | null = null;
  try {
    // URL lowercases the host and drops a default port.
    originHost = new URL(origin).host;
  } catch {
    originHost = null;
  }
  const host = (req.get('host') ?? '').toLowerCase().replace(/:(80|443)$/, '');
  if (!originHost || originHost !== host) {
    throw forbidden("a request that changes something with a session must come from this service's own origin (Origin names another host)");
  }
}

export function accountOf(res: Response): Account {
  return res.locals.account as Account;
}

/** Who made an account-scoped call, for the audit trail: `operator`, `access token <id>` or `account session`. */
export function callerOf(res: Response): string {
  return typeof res.locals.caller === 'string' ? res.locals.caller : 'unknown';
}

/** The session of the request's cookie (null without a live one), checked against a foreign Origin. */
async function cookieSession(req: Request, sessions: SessionStore): Promise<Session | null> {
  const id = sessionIdOf(req);
  if (!id) return null;
  const session = await sessions.find(id);
  if (session) refuseForeignOrigin(req);
  return session;
}

/** What the operator and account checks compare credentials with. */
export interface Credentials {
  accounts: AccountDirectory;
  sessions: SessionStore;
  /** ADMIN_TOKEN; unset, no token is the admin token. */
  adminToken: string | undefined;
  /** Wrong admin tokens by client address, shared by sign-in and every route that takes the admin token. */
  adminTokenGuesses: AdminTokenGuesses;
}

const adminHashOf = (credentials: Credentials): Buffer | null => (credentials.adminToken ? hashToken(credentials.adminToken) : null);

/**
 * Access tokens start with `trk_` (then 256 random bits); the admin token never does (src/config.ts),
 * so such a token is an access token's, right or wrong, and never a guess of the admin token.
 * Browser keys (`tbk_`, docs/browser.md) are not guesses either; they take no call here (401).
 */
const isAccessTokenLike = (token: string): boolean => token.startsWith(accessTokenPrefix);
const isAccountCredential = (token: string): boolean => isAccessTokenLike(token) || isBrowserKeyLike(token);

/**
 * Whether the token of an Authorization header is the admin token. An access token's is not, and is
 * neither counted nor slowed. Any other token is a guess of the admin token: an address that has
 * used up its wrong guesses gets 429 before its token is compared, and a wrong one costs its address
 * a point.
 */
async function isAdminToken(req: Request, token: string, adminHash: Buffer | null, guesses: AdminTokenGuesses): Promise<boolean> {
  if (isAccountCredential(token)) return false;
  await guesses.check(req);
  if (adminHash && tokenMatches(token, adminHash)) return true;
  await guesses.failed(req);
  return false;
}

/**
 * Operator calls: `ADMIN_TOKEN` (compared in constant time) or an operator session. No token
 * configured means no access. An active access token or an account session is known but not
 * enough: 403.
 */
export function adminAuth(credentials: Credentials): RequestHandler {
  const adminHash = adminHashOf(credentials);
  const guesses = credentials.adminTokenGuesses;
  return async (req: Request, _res: Response, next: NextFunction) => {
    const token = presentedToken(req.get('authorization'));
    if (token) {
      if (await isAdminToken(req, token, adminHash, guesses)) return next();
      if (isAccessTokenLike(token) && (await credentials.accounts.isActiveToken(token))) {
        throw forbidden('an access token cannot make operator calls: they take the admin token');
      }
      throw unauthorized('admin token required');
    }
    const session = await cookieSession(req, credentials.sessions);
    if (!session) throw unauthorized('admin token or operator session required');
    if (session.kind !== 'operator') throw forbidden('an account session cannot make operator calls: sign in with the admin token');
    next();
  };
}

/**
 * Account-scoped calls (/admin/v1/accounts/:license/...): operator credentials, or the account's
 * own: an access token of scope ingest+read, or a session of the account. Another account's token
 * does not match this license code's tokens and gets 401; another account's session gets 403; a
 * token of scope ingest gets 403.
 */
export function accountReadAuth(credentials: Credentials): RequestHandler {
  const adminHash = adminHashOf(credentials);
  const guesses = credentials.adminTokenGuesses;
  const asOperator = async (license: string, res: Response): Promise<void> => {
    const account = await credentials.accounts.find(license);
    if (!account) throw notFound('unknown license code');
    res.locals.account = account;
    res.locals.caller = 'operator';
  };
  return async (req: Request, res: Response, next: NextFunction) => {
    const license = req.params.license;
    if (typeof license !== 'string') throw unauthorized('missing access token');
    const token = presentedToken(req.get('authorization'));
    if (token) {
      if (await isAdminToken(req, token, adminHash, guesses)) {
        await asOperator(license, res);
        return next();
      }
      if (!isAccessTokenLike(token)) throw unauthorized('invalid access token or license code');
      const found = await credentials.accounts.authenticate(license, token);
      if (!found) throw unauthorized('invalid access token or license code');
      if (found.scope !== 'ingest+read') {
        throw forbidden('this access token has scope ingest: it may post items but not read; use a token of scope ingest+read');
      }
      res.locals.account = found.account;
      res.locals.caller = `access token ${found.tokenId}`;
      return next();
    }
    const session = await cookieSession(req, credentials.sessions);
    if (!session) throw unauthorized('missing access token or session');
    if (session.kind === 'operator') {
      await asOperator(license, res);
      return next();
    }
    if (session.account.licenseCode !== license) throw forbidden("this session belongs to another account");
    res.locals.account = session.account;
    res.locals.caller = 'account session';
    next();
  };
}
