import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { hashToken, tokenMatches, type Account, type AccountDirectory } from '../accounts.js';
import { notFound, unauthorized } from '../errors.js';

/** The token of an Authorization header: bare, or after the scheme word `Bearer` (any case). */
export function presentedToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^bearer\s+(.+)$/i.exec(header.trim());
  const token = (match?.[1] ?? header).trim();
  return token === '' ? null : token;
}

export function accountOf(res: Response): Account {
  return res.locals.account as Account;
}

/** Ingest authentication (spec 5): license code in the path, access token of that account. */
export function ingestAuth(accounts: AccountDirectory): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = presentedToken(req.get('authorization'));
    const license = req.params.license;
    if (!token || typeof license !== 'string') throw unauthorized('missing access token');
    const account = await accounts.authenticate(license, token);
    if (!account) throw unauthorized('invalid access token or license code');
    res.locals.account = account;
    next();
  };
}

/** Admin authentication: `ADMIN_TOKEN`, compared in constant time; no token configured means no access. */
export function adminAuth(adminToken: string | undefined): RequestHandler {
  const adminHash = adminToken ? hashToken(adminToken) : null;
  return (req: Request, _res: Response, next: NextFunction) => {
    const token = presentedToken(req.get('authorization'));
    if (!adminHash || !token || !tokenMatches(token, adminHash)) throw unauthorized('admin token required');
    next();
  };
}

/**
 * Account-scoped read calls: the admin token, or that account's own access token. Another
 * account's token does not match this license code's token and gets 401.
 */
export function accountReadAuth(accounts: AccountDirectory, adminToken: string | undefined): RequestHandler {
  const adminHash = adminToken ? hashToken(adminToken) : null;
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = presentedToken(req.get('authorization'));
    const license = req.params.license;
    if (!token || typeof license !== 'string') throw unauthorized('missing access token');
    if (adminHash && tokenMatches(token, adminHash)) {
      const account = await accounts.find(license);
      if (!account) throw notFound('unknown license code');
      res.locals.account = account;
      return next();
    }
    const account = await accounts.authenticate(license, token);
    if (!account) throw unauthorized('invalid access token or license code');
    res.locals.account = account;
    next();
  };
}
