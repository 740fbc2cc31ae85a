import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Account } from './accounts.js';
import type { Pool } from './db/pool.js';
import {
  deleteExpiredSessions,
  deleteSession,
  insertAccountSession,
  insertOperatorSession,
  selectSession,
} from './sessions-sql.js';
import { hashToken } from './token-hash.js';

/** Sessions last 12 hours from sign-in. */
export const sessionSeconds = 12 * 60 * 60;

export type Session = { kind: 'operator' } | { kind: 'account'; account: Account; tokenId: string };

/** Session ids are 32 random bytes, base64url: 43 characters. Anything else is refused without a query. */
const sessionIdShape = /^[A-Za-z0-9_-]{43}$/;

const newSessionId = (): string => randomBytes(32).toString('base64url');

/**
 * An operator session's proof of the admin token it signed in with: an HMAC of ADMIN_TOKEN keyed by
 * the session id. The id is not stored (only its hash), so the table alone tells nothing about the
 * admin token; a changed ADMIN_TOKEN no longer matches, which ends every operator session.
 */
const adminFingerprint = (sessionId: string, adminToken: string): Buffer =>
  createHmac('sha256', sessionId).update(adminToken, 'utf8').digest();

/**
 * Dashboard sessions, kept in PostgreSQL so that every process of the service knows them and a
 * revoked token or a sign-out ends them everywhere at once. Each request with a session cookie
 * costs one indexed query: dashboard traffic, not ingest.
 */
export class SessionStore {
  constructor(
    private readonly pool: Pool,
    private readonly adminToken: string | undefined,
  ) {}

  /** A new account session for the token `tokenId`; returns the session id (the cookie's value). */
  async startAccountSession(account: Account, tokenId: string): Promise<string> {
    const id = newSessionId();
    await this.pool.query(deleteExpiredSessions);
    await this.pool.query(insertAccountSession, [hashToken(id), account.id, tokenId, sessionSeconds]);
    return id;
  }

  /** A new operator session; the caller has checked the admin token. */
  async startOperatorSession(): Promise<string> {
    if (!this.adminToken) throw new Error('no ADMIN_TOKEN: operator sessions cannot be made');
    const id = newSessionId();
    await this.pool.query(deleteExpiredSessions);
    await this.pool.query(insertOperatorSession, [hashToken(id), adminFingerprint(id, this.adminToken), sessionSeconds]);
    return id;
  }

  /** The live session of a session id, or null (unknown, expired, its token revoked, ADMIN_TOKEN changed). */
  async find(sessionId: string): Promise<Session | null> {
    if (!sessionIdShape.test(sessionId)) return null;
    const { rows } = await this.pool.query<{
      kind: 'account' | 'operator';
      admin_fingerprint: Buffer | null;
      token_id: string | null;
      account_id: string | null;
      name: string | null;
      license_code: string | null;
    }>(selectSession, [hashToken(sessionId)]);
    const row = rows[0];
    if (!row) return null;
    if (row.kind === 'operator') {
      if (!this.adminToken || !row.admin_fingerprint) return null;
      const expected = adminFingerprint(sessionId, this.adminToken);
      return expected.length === row.admin_fingerprint.length && timingSafeEqual(expected, row.admin_fingerprint) ? { kind: 'operator' } : null;
    }
    if (!row.account_id || !row.name || !row.license_code || !row.token_id) return null;
    return { kind: 'account', account: { id: row.account_id, name: row.name, licenseCode: row.license_code }, tokenId: row.token_id };
  }

  async end(sessionId: string): Promise<void> {
    if (!sessionIdShape.test(sessionId)) return;
    await this.pool.query(deleteSession, [hashToken(sessionId)]);
  }
}
