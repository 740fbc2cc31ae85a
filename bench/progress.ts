import type pg from 'pg';
import { projections } from '../projections/index.js';
import * as sql from './progress-sql.js';

/** How far the projections are, read from their cursors and parts (progress-sql.ts). */

/** Accounts behind, per projection. */
export async function accountsBehind(db: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ projection: string; behind: number }>(sql.accountsBehind, [projections.map((p) => p.name)]);
  return new Map(rows.map((row) => [row.projection, row.behind]));
}

/** Every projection's cursor of every account with events is at that account's last event. */
export async function caughtUp(db: pg.Pool): Promise<boolean> {
  return [...(await accountsBehind(db)).values()].every((behind) => behind === 0);
}

/** Events applied per projection, over every account. */
export async function appliedByProjection(db: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ projection: string; applied: string }>(sql.appliedByProjection);
  return new Map(rows.map((row) => [row.projection, Number(row.applied)]));
}

export async function anyCursor(db: pg.Pool): Promise<boolean> {
  return (await db.query<{ started: boolean }>(sql.anyCursor)).rows[0]?.started === true;
}

/** Parts held by each live worker (pid@host). */
export async function partsHeld(db: pg.Pool): Promise<Map<string, number[]>> {
  const { rows } = await db.query<{ name: string; held: number[] | null }>(sql.partsHeld);
  return new Map(rows.map((row) => [row.name, row.held ?? []]));
}

/** Claims made on parts so far, over every part (each claim bumps its part's epoch). */
export async function claimsMade(db: pg.Pool): Promise<number> {
  return Number((await db.query<{ claims: string }>(sql.claimsMade)).rows[0]?.claims ?? 0);
}

/** Events applied in the accounts of the parts each worker holds now (key: pid@host, or '' for parts nobody holds). */
export async function appliedByOwner(db: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ name: string | null; applied: string }>(sql.appliedByOwner);
  return new Map(rows.map((row) => [row.name ?? '', Number(row.applied)]));
}

/** Nothing projected any more (no worker may be alive): the next catch-up starts from the start. */
export async function forgetProjected(db: pg.Pool): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    for (const statement of sql.forgetProjected(projections.flatMap((p) => p.tables))) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  await db.query('VACUUM (ANALYZE)');
}
