import type { Pool } from '../../src/db/pool.js';

/**
 * The text of every row of every table of the database (the data a pg_dump would write), to
 * search for what must not be kept.
 */
export async function databaseText(pool: Pool): Promise<string> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await pool.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
    parts.push(`-- ${name}\n${rows.map((r) => r.row).join('\n')}`);
  }
  return parts.join('\n');
}
