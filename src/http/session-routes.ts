import { Router, type CookieOptions, type Request, type Response } from 'express';
import { badRequest, forbidden, unauthorized } from '../errors.js';
import { sessionSeconds, type Session } from '../accounts/sessions.js';
import { hashToken, tokenMatches } from '../accounts/token-hash.js';
import { refuseForeignOrigin, sessionCookie, sessionIdOf, type Credentials } from './auth.js';
import { checkedJsonBody } from './params.js';

/** Sign-in bodies hold two short strings. */
const signInBytes = 4 * 1024;
const maxCredentialLength = 512;

function cookieOptions(req: Request): CookieOptions {
  return { httpOnly: true, sameSite: 'strict', path: '/', secure: req.secure };
}

function sessionBody(session: Session): object {
  return session.kind === 'operator'
    ? { kind: 'operator' }
    : { kind: 'account', account: { licenseCode: session.account.licenseCode, name: session.account.name } };
}

function credential(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw badRequest(`${name} is required and must be a non-empty string`);
  if (value.length > maxCredentialLength) throw unauthorized('wrong credentials');
  return value;
}

/**
 * Dashboard sessions (docs/api.md, Sessions): sign in with a license code and an access token of
 * scope ingest+read, or with the admin token; the cookie holds the session id.
 */
export function sessionRoutes(credentials: Credentials): Router {
  const router = Router();
  const session = router.route('/session');
  const guesses = credentials.adminTokenGuesses;

  session.post(...checkedJsonBody(signInBytes), async (req: Request, res: Response) => {
    // Signing in from another site (login CSRF) would put the victim in the attacker's account.
    refuseForeignOrigin(req);
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
    const fields = body as Record<string, unknown>;
    let started: Session;
    let sessionId: string;
    if ('adminToken' in fields) {
      if ('licenseCode' in fields || 'accessToken' in fields) throw badRequest('give either adminToken, or licenseCode and accessToken');
      await guesses.check(req);
      const adminToken = credential(fields, 'adminToken');
      const adminHash = credentials.adminToken ? hashToken(credentials.adminToken) : null;
      if (!adminHash || !tokenMatches(adminToken, adminHash)) {
        await guesses.failed(req);
        throw unauthorized('wrong admin token');
      }
      sessionId = await credentials.sessions.startOperatorSession();
      started = { kind: 'operator' };
    } else {
      const licenseCode = credential(fields, 'licenseCode');
      const accessToken = credential(fields, 'accessToken');
      const found = await credentials.accounts.authenticate(licenseCode, accessToken);
      if (!found) throw unauthorized('wrong license code or access token');
      if (found.scope !== 'ingest+read') throw forbidden('this access token has scope ingest: signing in needs a token of scope ingest+read');
      sessionId = await credentials.sessions.startAccountSession(found.account, found.tokenId);
      started = { kind: 'account', account: found.account, tokenId: found.tokenId };
    }
    // A session the browser held before is ended rather than left to expire.
    const previous = sessionIdOf(req);
    if (previous) await credentials.sessions.end(previous);
    req.log.info({ kind: started.kind }, 'signed in');
    res.cookie(sessionCookie, sessionId, { ...cookieOptions(req), maxAge: sessionSeconds * 1000 });
    res.json(sessionBody(started));
  });

  session.get(async (req: Request, res: Response) => {
    const id = sessionIdOf(req);
    const current = id ? await credentials.sessions.find(id) : null;
    if (!current) throw unauthorized('no session: sign in first');
    res.json(sessionBody(current));
  });

  session.delete(async (req: Request, res: Response) => {
    const id = sessionIdOf(req);
    if (id) {
      refuseForeignOrigin(req);
      await credentials.sessions.end(id);
    }
    res.clearCookie(sessionCookie, cookieOptions(req));
    res.status(204).end();
  });
  return router;
}
