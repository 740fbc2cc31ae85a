/** The statements of erasure requests (migrations: erasure). */

const columns = `id, account_id, user_id, anonymous_id, user_ref, anonymous_ref, suppress, requested_by, requested_at, state, keys_erased_at, done_at, counts, progress, error, attempts`;

export const insertErasure = `
INSERT INTO erasures (id, account_id, user_id, anonymous_id, suppress, requested_by, user_ref, anonymous_ref)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING ${columns}`;

/** The account's erasures naming user $2 or anonymous id $3 (pseudonyms), the latest first, at most $4. */
export const erasuresNaming = `
SELECT ${columns} FROM erasures
WHERE account_id = $1 AND (user_ref = $2 OR anonymous_ref = $3)
ORDER BY requested_at DESC, id DESC
LIMIT $4`;

export const erasureOfAccount = `SELECT ${columns} FROM erasures WHERE account_id = $1 AND id = $2`;

/** The account's erasures, the latest first, after the cursor ($2 time, $3 id) when given. */
export const erasuresOfAccount = `
SELECT ${columns} FROM erasures
WHERE account_id = $1 AND ($2::timestamptz IS NULL OR (requested_at, id) < ($2, $3::uuid))
ORDER BY requested_at DESC, id DESC
LIMIT $4`;

/**
 * Claims, for worker $1 and $2 ms, every pending erasure of the account whose pending erasure is
 * the oldest one not leased (of account $3 only, unless null): they run together, with one rebuild.
 * An erasure leased by another worker meanwhile is left out (the lease is checked again on the
 * locked row).
 */
export const claimErasures = `
WITH first AS (
  SELECT account_id FROM erasures
  WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < clock_timestamp()) AND ($3::uuid IS NULL OR account_id = $3::uuid)
  ORDER BY requested_at LIMIT 1
  FOR UPDATE SKIP LOCKED
)
UPDATE erasures e SET lease_owner = $1, lease_until = clock_timestamp() + $2 * interval '1 millisecond', attempts = e.attempts + 1
FROM first
WHERE e.account_id = first.account_id AND e.state = 'pending' AND (e.lease_until IS NULL OR e.lease_until < clock_timestamp())
RETURNING e.id, e.account_id, e.user_id, e.anonymous_id, e.user_ref, e.anonymous_ref, e.suppress, e.requested_by, e.requested_at, e.state, e.keys_erased_at, e.done_at, e.counts, e.progress, e.error, e.attempts`;

export const renewLeases = `
UPDATE erasures SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
WHERE id = ANY($2::uuid[]) AND lease_owner = $1 AND state = 'pending'`;

/** Whether the projections have met the account (an account they have not has nothing to rebuild). */
export const accountProjected = 'SELECT EXISTS (SELECT 1 FROM projection_accounts WHERE account_id = $1) AS projected';

/** The anonymous ids merged into users $2 (pseudonyms) of the account: their pseudonyms, and the ids where still kept. */
export const mergedAnonymousIds = `SELECT anonymous_ref, anonymous_id FROM identity_merges WHERE account_id = $1 AND user_ref = ANY($2::text[])`;

/** Keeps the pseudonyms of an erasure's ids ($2 the user's, $3 the anonymous id's) for good. */
export const saveRefs = 'UPDATE erasures SET user_ref = $2, anonymous_ref = $3 WHERE id = $1';

/** The identity map forgets the ids of erased people ($2 users', $3 anonymous ids' pseudonyms), keeping their pseudonyms. */
export const forgetMergedIds = `
UPDATE identity_merges SET user_id = NULL, anonymous_id = NULL
WHERE account_id = $1 AND (user_ref = ANY($2::text[]) OR anonymous_ref = ANY($3::text[])) AND (user_id IS NOT NULL OR anonymous_id IS NOT NULL)`;

/**
 * Events of the PostgreSQL store sealed with the erased keys of people $2 that still hold their ids
 * readable (stored before ids were sealed, with their pseudonyms beside them since): the ids go.
 * On EventStoreDB, whose events cannot change, this table is empty.
 */
export const forgetReadableIds = `
WITH forgotten AS (
  UPDATE events SET data = data - 'userId' - 'anonymousId'
  WHERE data ? 'sealed' AND (data ? 'userId' OR data ? 'anonymousId')
    AND ((data->'sealed'->>'k')::bigint) IN (SELECT key_id FROM person_keys WHERE account_id = $1 AND person_id = ANY($2::text[]) AND key IS NULL)
  RETURNING 1
)
SELECT count(*)::int AS forgotten FROM forgotten`;

export const suppressIds = `
INSERT INTO suppressed_ids (account_id, person_id, erasure_id)
SELECT $1, person_id, $3 FROM unnest($2::text[]) AS p(person_id)
ON CONFLICT (account_id, person_id) DO NOTHING`;

/** Marks when the keys were first erased (kept on a later attempt: the settle wait counts from it). */
export const markKeysErased = `
UPDATE erasures SET keys_erased_at = coalesce(keys_erased_at, clock_timestamp())
WHERE id = ANY($1::uuid[])
RETURNING keys_erased_at, clock_timestamp() AS now`;

/** The keys of people $2 that erasure $3 erased (in this attempt or an earlier one). */
export const keysErasedBy = `
SELECT count(*)::int AS keys FROM person_keys
WHERE account_id = $1 AND person_id = ANY($2::text[]) AND erasure_id = $3`;

export const leadsOfPersons = `
SELECT count(*)::int AS leads FROM leads
WHERE account_id = $1 AND ((profile_kind = 'user' AND profile_id = ANY($2::text[])) OR (profile_kind = 'anonymous' AND profile_id = ANY($3::text[])))`;

export const eventsOfPersons = `
SELECT count(*)::int AS events FROM track_index
WHERE account_id = $1 AND coalesce(user_id, anonymous_id) = ANY($2::text[] || $3::text[])
  AND (user_id = ANY($2::text[]) OR (user_id IS NULL AND anonymous_id = ANY($3::text[])))`;

/**
 * Refused items that name one of the ids: in their excerpt (JSON text, where an id is a JSON
 * string) or in their message (where it is quoted '...').
 */
export const deleteRejectedItems = `
WITH gone AS (
  DELETE FROM ingest_rejected_items
  WHERE account_id = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS n(needle) WHERE strpos(coalesce(excerpt, '') || message, n.needle) > 0)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`;

/** Recorded replies that name one of the ids (the request is then answered as a new one, under a new window). */
export const deleteIdempotencyReplies = `
WITH gone AS (
  DELETE FROM idempotency_keys
  WHERE account_id = $1 AND reply IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS n(needle) WHERE strpos(reply::text, n.needle) > 0)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`;

/** Adds to what the erasure's attempts found: keys of $2 replace those before. */
export const saveProgress = 'UPDATE erasures SET progress = progress || $2 WHERE id = $1';

/** Done: the ids it named go, their pseudonyms stay (saveRefs). */
export const markDone = `
UPDATE erasures SET state = 'done', done_at = clock_timestamp(), counts = $2, lease_owner = NULL, lease_until = NULL, user_id = NULL, anonymous_id = NULL
WHERE id = $1`;

export const markFailed = `
UPDATE erasures SET state = 'failed', done_at = clock_timestamp(), error = $2, lease_owner = NULL, lease_until = NULL
WHERE id = ANY($1::uuid[])`;

/** Lets another attempt claim them after $2 ms. */
export const releaseForRetry = `
UPDATE erasures SET lease_owner = NULL, lease_until = clock_timestamp() + $2 * interval '1 millisecond'
WHERE id = ANY($1::uuid[]) AND state = 'pending'`;

/** This transaction's id: a snapshot older than it may still see the rows deleted before it. */
export const currentXid = 'SELECT txid_current()::text AS xid';

/** Other sessions holding a snapshot older than transaction $1 (as txid text). */
export const olderSnapshots = `
SELECT count(*)::int AS older FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
  AND age(backend_xmin) >= age((($1::bigint) % 4294967296)::text::xid)`;

/** The tables that held a person's data in plain text, vacuumed once it is deleted from them. */
export const vacuumedTables = [
  'identity_merges',
  'erasures',
  'person_keys',
  'leads',
  'lead_merges',
  'user_events',
  'products',
  'product_events',
  'track_index',
  'ingest_rejected_items',
  'idempotency_keys',
  'projection_parked_events',
] as const;

/** Vacuumed too when the erasure changed events stored before ids were sealed (forgetReadableIds): only then does it hold their old versions. */
export const vacuumedEvents = 'events';

/** Vacuumed once the erasures are done: the tables whose ids the decision forgot. */
export const vacuumedWhenDone = ['identity_merges', 'erasures'] as const;
