import type { Pool } from '../../src/db/pool.js';
import { sessionName } from '../../projections/runner/checkpoints-sql.js';

/**
 * A record, kept by the database itself, of every cursor move that commits: which session
 * committed it, and who held the account's part at that moment. A deferred constraint trigger runs
 * at the commit of the batch's transaction (after its fence, whose share lock keeps the part's row
 * as it is until the commit), so a batch rolled back leaves no entry, and an entry's owner is the
 * part's owner when the batch committed. Specs of workers sharing the parts check with it that no
 * worker commits a batch of a part it no longer holds.
 */

/** Installs the record in a test database (after the migrations). */
export const installCursorMoves = `
CREATE TABLE test_cursor_moves (
  seq              bigserial PRIMARY KEY,
  committed_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  session          text NOT NULL,
  projection       text NOT NULL,
  account_id       text NOT NULL,
  from_checkpoint  text,
  to_checkpoint    text,
  events           bigint NOT NULL,
  part             integer,
  owner_name       text,
  epoch            bigint
);
CREATE FUNCTION test_record_cursor_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO test_cursor_moves (session, projection, account_id, from_checkpoint, to_checkpoint, events, part, owner_name, epoch)
  SELECT current_setting('application_name'), NEW.projection, NEW.account_id, OLD.checkpoint, NEW.checkpoint,
         NEW.events_applied - OLD.events_applied, p.part, p.owner_name, p.epoch
  FROM (SELECT 1) AS one
  LEFT JOIN projection_accounts a ON a.account_id = NEW.account_id
  LEFT JOIN projection_parts p ON p.part = a.part;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER test_cursor_moves AFTER UPDATE OF checkpoint ON projection_account_checkpoints
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.checkpoint IS DISTINCT FROM NEW.checkpoint)
  EXECUTE FUNCTION test_record_cursor_move()`;

export const selectCursorMoves = `SELECT seq::int AS seq, committed_at, session, projection, account_id, from_checkpoint, to_checkpoint,
  events::int AS events, part, owner_name, epoch::int AS epoch FROM test_cursor_moves ORDER BY seq`;

export interface CursorMove {
  seq: number;
  committed_at: Date;
  /** application_name of the committing session: `tracking-projection <pid>@<host>`. */
  session: string;
  projection: string;
  account_id: string;
  from_checkpoint: string | null;
  to_checkpoint: string | null;
  events: number;
  part: number | null;
  /** The part's owner (pid@host) and epoch when the batch committed. */
  owner_name: string | null;
  epoch: number | null;
}

export async function recordCursorMoves(pool: Pool): Promise<void> {
  await pool.query(installCursorMoves);
}

export async function cursorMoves(pool: Pool): Promise<CursorMove[]> {
  return (await pool.query<CursorMove>(selectCursorMoves)).rows;
}

/** Moves committed by a session that is not the part's owner's at the commit: batches of a lost claim. */
export function movesOutsideTheirClaim(moves: readonly CursorMove[]): CursorMove[] {
  return moves.filter((move) => move.owner_name === null || move.session !== sessionName(move.owner_name));
}

/** Cursor positions moved from more than once ((projection, account, from) twice): a batch applied twice. */
export function movesRepeated(moves: readonly CursorMove[]): CursorMove[] {
  const seen = new Set<string>();
  return moves.filter((move) => {
    const key = `${move.projection}\u0000${move.account_id}\u0000${move.from_checkpoint ?? ''}`;
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  });
}
