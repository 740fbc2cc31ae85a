import { createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Account } from './account.js';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import {
  deleteExpiredSessions,
  deleteSession,
  insertAccountSession,
  insertOperatorSession,
  lockAdminTokenGeneration,
  nextAdminTokenGeneration,
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
 * the session id. The id is not stored (only its hash), so the sessions table alone tells nothing about
 * the admin token; a changed ADMIN_TOKEN no longer matches, which ends every operator session.
 */
const adminFingerprint = (sessionId: string, adminToken: string): Buffer =>
  createHmac('sha256', sessionId).update(adminToken, 'utf8').digest();

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number) => Promise<Buffer>;

/** The admin token as table admin_token_generation keeps it: scrypt (node's defaults, 16 MiB) with a salt. */
const slowHashOf = (adminToken: string, salt: Buffer): Promise<Buffer> => scryptAsync(adminToken, salt, 32);

/**
 * Records the admin token this process started with and answers its generation: the stored one
 * when the token is the one last recorded, else the next (migrations/…_admin-token-generation.sql).
 * The row is locked meanwhile: processes starting at once with one token get one generation.
 */
async function recordAdminToken(pool: Pool, adminToken: string | undefined): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ salt: Buffer; token_hash: Buffer | null; generation: string }>(lockAdminTokenGeneration);
    const last = rows[0];
    if (!last) throw new Error('admin_token_generation holds no row: the database is not migrated');
    const same =
      adminToken === undefined
        ? last.token_hash === null
        : last.token_hash !== null && last.token_hash.length === 32 && timingSafeEqual(await slowHashOf(adminToken, last.salt), last.token_hash);
    if (same) return Number(last.generation);
    const salt = randomBytes(16);
    const next = await client.query<{ generation: string }>(nextAdminTokenGeneration, [salt, adminToken === undefined ? null : await slowHashOf(adminToken, salt)]);
    return Number(next.rows[0]?.generation);
  });
}

/**
 * Dashboard sessions, kept in PostgreSQL so that every process of the service knows them and a
 * revoked token or a sign-out ends them everywhere at once. Each request with a session cookie
 * costs one indexed query: dashboard traffic, not ingest.
 */
export class SessionStore {
  private adminGeneration: Promise<number> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly adminToken: string | undefined,
  ) {
    // Recorded as the process starts, so that a later change of ADMIN_TOKEN is seen as one even if
    // no operator signs in meanwhile; a failure is tried again at the next operator session.
    void this.generation().catch(() => undefined);
  }

  /**
   * The generation of this process's ADMIN_TOKEN. An operator session lives only in processes of
   * the generation it was made in: changing ADMIN_TOKEN ends it, and changing it back does not
   * revive it. A process keeps the generation it started with.
   */
  private generation(): Promise<number> {
    this.adminGeneration ??= recordAdminToken(this.pool, this.adminToken).catch((error: unknown) => {
      this.adminGeneration = null;
      throw error;
    });
    return this.adminGeneration;
  }

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
    const generation = await this.generation();
    const id = newSessionId();
    await this.pool.query(deleteExpiredSessions);
    await this.pool.query(insertOperatorSession, [hashToken(id), adminFingerprint(id, this.adminToken), generation, sessionSeconds]);
    return id;
  }

  /** The live session of a session id, or null (unknown, expired, its token revoked, ADMIN_TOKEN changed since). */
  async find(sessionId: string): Promise<Session | null> {
    if (!sessionIdShape.test(sessionId)) return null;
    const { rows } = await this.pool.query<{
      kind: 'account' | 'operator';
      admin_fingerprint: Buffer | null;
      admin_generation: string | null;
      token_id: string | null;
      account_id: string | null;
      name: string | null;
      license_code: string | null;
    }>(selectSession, [hashToken(sessionId)]);
    const row = rows[0];
    if (!row) return null;
    if (row.kind === 'operator') {
      if (!this.adminToken || !row.admin_fingerprint || row.admin_generation === null) return null;
      if (Number(row.admin_generation) !== (await this.generation())) return null;
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
