import { randomUUID } from 'node:crypto';
import type { Pool } from '../db/pool.js';
import type { AccountRefs } from '../eventstore/events.js';
import { identityProblem } from '../ingest/identifiers.js';
import type { Validator } from '../ingest/validation.js';
import { requestingTokens, tokenIdOf, type RequestingToken } from './requesters.js';
import * as sql from './sql.js';

export type ErasureState = 'pending' | 'done' | 'failed';

/** What an erasure removed, once done. */
export interface ErasureCounts {
  /** Keys erased: the person's, and those of the anonymous ids merged into them. */
  keys: number;
  /** Stored events of the person, now unreadable (their trackIDs, types and times remain). */
  events: number;
  /** Leads removed from the read model. */
  leads: number;
  /** Refused items (Ingestion warnings) deleted because they named the person. */
  rejectedItems: number;
  /** Recorded Idempotency-Key replies deleted because they named the person. */
  idempotencyReplies: number;
}

/** An erasure request as the API shows it (docs/api.md, Erasure). */
export interface Erasure {
  id: string;
  /** The ids it names, until it is done: then only their pseudonyms remain. */
  userId: string | null;
  anonymousId: string | null;
  /** The pseudonyms of the ids (src/eventstore/pseudonyms.ts), kept for good: what an auditor matches an id against. */
  userRef: string | null;
  anonymousRef: string | null;
  suppress: boolean;
  /** `access token <id>`, `account session`, `operator` or `cli`. */
  requestedBy: string;
  /** The access token of `requestedBy`, with its label; null when it was requested otherwise. */
  requestedByToken: RequestingToken | null;
  requestedAt: string;
  state: ErasureState;
  doneAt: string | null;
  counts: ErasureCounts | null;
  error: string | null;
}

/** An erasure as the runner holds it. */
export interface ErasureJob extends Omit<Erasure, 'requestedByToken'> {
  accountId: string;
  /** What earlier attempts counted and deleted. */
  progress: Partial<ErasureCounts>;
  keysErasedAt: string | null;
  attempts: number;
}

export interface ErasureRow {
  id: string;
  account_id: string;
  user_id: string | null;
  anonymous_id: string | null;
  user_ref: string | null;
  anonymous_ref: string | null;
  suppress: boolean;
  requested_by: string;
  requested_at: Date;
  state: ErasureState;
  keys_erased_at: Date | null;
  done_at: Date | null;
  counts: ErasureCounts | null;
  progress: Partial<ErasureCounts>;
  error: string | null;
  attempts: number;
}

export function jobOf(row: ErasureRow): ErasureJob {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    userRef: row.user_ref,
    anonymousRef: row.anonymous_ref,
    suppress: row.suppress,
    requestedBy: row.requested_by,
    requestedAt: row.requested_at.toISOString(),
    state: row.state,
    doneAt: row.done_at?.toISOString() ?? null,
    counts: row.counts,
    error: row.error,
    keysErasedAt: row.keys_erased_at?.toISOString() ?? null,
    progress: row.progress,
    attempts: row.attempts,
  };
}

/**
 * An erasure as the API shows it: without the runner's bookkeeping, with the token it was
 * requested with (`tokens`, by id: requestingTokens).
 */
export function erasureOf(row: ErasureRow, tokens: Map<string, RequestingToken>): Erasure {
  const job = jobOf(row);
  const tokenId = tokenIdOf(job.requestedBy);
  return {
    id: job.id,
    userId: job.userId,
    anonymousId: job.anonymousId,
    userRef: job.userRef,
    anonymousRef: job.anonymousRef,
    suppress: job.suppress,
    requestedBy: job.requestedBy,
    requestedByToken: (tokenId !== null ? tokens.get(tokenId) : undefined) ?? null,
    requestedAt: job.requestedAt,
    state: job.state,
    doneAt: job.doneAt,
    counts: job.counts,
    error: job.error,
  };
}

/** Erasure rows of account `accountId` as the API shows them, the tokens they were requested with found in one query. */
async function shown(pool: Pool, accountId: string, rows: ErasureRow[]): Promise<Erasure[]> {
  const tokens = await requestingTokens(pool, accountId, rows.map((row) => row.requested_by));
  return rows.map((row) => erasureOf(row, tokens));
}

export interface ErasureRequest {
  userId?: string;
  anonymousId?: string;
  suppress?: boolean;
}

/**
 * `body` as an erasure request, or why it is none (the message names the field): the schema
 * (schemas/erasure-request.json), then ids that SDKs send by mistake, as items are refused for them.
 */
export function checkErasureRequest(validator: Validator, body: unknown): { ok: true; request: ErasureRequest } | { ok: false; message: string } {
  const validation = validator.validate('erasure-request', body);
  if (!validation.ok) return { ok: false, message: validation.message };
  const request = body as ErasureRequest;
  for (const field of ['userId', 'anonymousId'] as const) {
    const value = request[field];
    const problem = value === undefined ? null : identityProblem(field, value);
    if (problem) return { ok: false, message: problem };
  }
  return { ok: true, request };
}

/** Records an erasure request; the runner (runner.ts) carries it out. */
export async function requestErasure(pool: Pool, refs: AccountRefs, request: ErasureRequest, requestedBy: string): Promise<Erasure> {
  const { rows } = await pool.query<ErasureRow>(sql.insertErasure, [
    randomUUID(),
    refs.accountId,
    request.userId ?? null,
    request.anonymousId ?? null,
    request.suppress === true,
    requestedBy,
    request.userId === undefined ? null : refs.user(request.userId),
    request.anonymousId === undefined ? null : refs.anonymous(request.anonymousId),
  ]);
  return (await shown(pool, refs.accountId, rows))[0] as Erasure;
}

export async function findErasure(pool: Pool, accountId: string, id: string): Promise<Erasure | null> {
  const { rows } = await pool.query<ErasureRow>(sql.erasureOfAccount, [accountId, id]);
  return (await shown(pool, accountId, rows))[0] ?? null;
}

/** The erasures of the account that named an id: found by its pseudonym, also once the id itself is gone. */
export async function erasuresNaming(pool: Pool, refs: AccountRefs, ids: ErasureRequest): Promise<{ userRef: string | null; anonymousRef: string | null; erasures: Erasure[] }> {
  const userRef = ids.userId === undefined ? null : refs.user(ids.userId);
  const anonymousRef = ids.anonymousId === undefined ? null : refs.anonymous(ids.anonymousId);
  const { rows } = await pool.query<ErasureRow>(sql.erasuresNaming, [refs.accountId, userRef, anonymousRef, maxNamingErasures]);
  return { userRef, anonymousRef, erasures: await shown(pool, refs.accountId, rows) };
}

/** Erasures one lookup returns at most: an id is erased once, or a few times when met again. */
const maxNamingErasures = 100;

export interface ErasurePage {
  erasures: Erasure[];
  nextCursor: string | null;
}

/** The account's erasures, the latest first; `cursor` is a page's nextCursor. */
export async function listErasures(pool: Pool, accountId: string, limit: number, cursor?: { requestedAt: string; id: string }): Promise<ErasurePage> {
  const { rows } = await pool.query<ErasureRow>(sql.erasuresOfAccount, [accountId, cursor?.requestedAt ?? null, cursor?.id ?? null, limit + 1]);
  const erasures = await shown(pool, accountId, rows.slice(0, limit));
  const last = erasures.at(-1);
  const nextCursor = rows.length > limit && last ? Buffer.from(JSON.stringify([last.requestedAt, last.id])).toString('base64url') : null;
  return { erasures, nextCursor };
}

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isErasureId = (text: string): boolean => uuidShape.test(text);

/** A list cursor, or null when it is not one listErasures gave out. */
export function decodeErasureCursor(text: string): { requestedAt: string; id: string } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [requestedAt, id] = value as unknown[];
    if (typeof requestedAt !== 'string' || Number.isNaN(Date.parse(requestedAt)) || typeof id !== 'string' || !isErasureId(id)) return null;
    return { requestedAt, id };
  } catch {
    return null;
  }
}
