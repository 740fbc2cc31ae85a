/** SQL of the secondary indexes a whole rebuild drops and makes again (table projection_rebuild_indexes). */

/**
 * The secondary indexes of tables $1 (regclass names): neither a primary key nor unique nor behind
 * a constraint, so that no upsert of the replay needs them.
 */
export const secondaryIndexes = `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
  FROM pg_index i
  WHERE i.indrelid = ANY ($1::regclass[]) AND NOT i.indisprimary AND NOT i.indisunique
    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
  ORDER BY 1`;

/** Keeps an index's definition ($2, $3) before it is dropped; the first kept wins. */
export const keepIndex = `INSERT INTO projection_rebuild_indexes (projection, index_name, definition) VALUES ($1, $2, $3)
  ON CONFLICT DO NOTHING`;

export const keptIndexes = 'SELECT index_name, definition FROM projection_rebuild_indexes WHERE projection = $1 ORDER BY index_name';

export const forgetIndex = 'DELETE FROM projection_rebuild_indexes WHERE projection = $1 AND index_name = $2';

/** Whether an index of this name exists ($1). */
export const indexExists = 'SELECT to_regclass($1) IS NOT NULL AS present';
