import type { RecordedEvent } from '../../src/eventstore/port.js';
import { LeadBook, leadKeysOf, type LeadMerge, type LeadRow, type ProfileKind } from './fold.js';
import * as sql from './sql.js';
import type { Db, Projection } from '../runner/projection.js';
import { writeRows } from '../rows-sql.js';

/**
 * A row without its null columns, which json_populate_recordset fills in as null anyway: a row
 * loaded from the table carries some twenty of them, and each costs the upsert a parse.
 */
function withoutNulls(row: LeadRow): Record<string, unknown> {
  const sent: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) if (value !== null) sent[column] = value;
  return sent;
}

/** Leads: one row per profile, known or anonymous, from UserUpserted and ProfilesMerged. */
export const leadsProjection: Projection = {
  name: 'leads',
  eventTypes: ['UserUpserted', 'ProfilesMerged'],
  tables: ['leads', 'lead_merges'],

  async apply(db: Db, batch: RecordedEvent[]): Promise<void> {
    // An erased person's events leave no lead (docs/decisions.md, Erasure).
    const events = batch.filter((event) => !event.erased);
    if (events.length === 0) return;
    const keys = leadKeysOf(events);
    const merges = keys.anonymous.length
      ? (await db.query<LeadMerge>(sql.selectMerges, [keys.anonymous.map((k) => k[0]), keys.anonymous.map((k) => k[1])])).rows
      : [];
    // Anonymous profiles merged earlier pass what they are sent on to their known profile.
    const rowKeys: [string, ProfileKind, string][] = [...keys.rows, ...merges.map((m): [string, ProfileKind, string] => [m.account_id, 'user', m.user_id])];
    const { rows } = await db.query<{ row: LeadRow }>(sql.selectLeads, [
      rowKeys.map((k) => k[0]),
      rowKeys.map((k) => k[1]),
      rowKeys.map((k) => k[2]),
    ]);
    const book = new LeadBook(
      rows.map((r) => r.row),
      merges,
    );
    for (const event of events) book.apply(event);
    await writeRows(db, sql.upsertLeads, book.changedRows().map(withoutNulls));
    const added = book.addedMerges();
    await writeRows(db, sql.insertMerges, added);
  },
};
