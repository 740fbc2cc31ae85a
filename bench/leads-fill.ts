import type pg from 'pg';

/**
 * Leads written straight into the read model (as the leads projection would have left them), for
 * the leads scenario: realistic ids, names and emails, made in SQL so that a million take seconds.
 * Lead n of an account: known (userId `cust-<n>`, names, email) except every 8th, anonymous (an id
 * of 16 hex digits, no names). Every 200,000th known lead is named Quillfeather: a rare term.
 * Known leads have the custom attributes `plan` (free, pro or team: n % 3, a third each) and
 * `cohort` (c<n % 1000>: one in a thousand).
 */

const firstNames = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara',
  'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Carlos', 'Karen', 'Daniel', 'Lisa', 'Matthew', 'Nancy',
  'Anthony', 'Sophie', 'Mark', 'Emma', 'Paul', 'Chloé', 'Lukas', 'Ana', 'Kenji', 'Yuki', 'Mohammed', 'Fatima', 'Olga', 'Ivan',
];
const lastNames = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez',
  'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White',
  'Müller', 'Schmidt', 'Dubois', 'Rossi', 'Tanaka', 'Suzuki', 'Kowalski', 'Novak', 'Ivanova', 'Haddad', 'Nguyen', 'Silva',
];
const domains = ['gmail.com', 'yahoo.com', 'outlook.com', 'hotmail.com', 'acme-corp.com', 'example.org', 'web.de', 'icloud.com'];

export const rareLastName = 'Quillfeather';

const textArray = (values: string[]): string => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]::text[]`;

/** $1 account id, $2 leads, $3 position of lead 0, $4 position step (accounts interleave in the store). */
const fillSql = `WITH n AS (
  SELECT g AS n,
    (${textArray(firstNames)})[1 + (g * 7919) % ${firstNames.length}] AS first_name,
    CASE WHEN g % 200000 = 7 THEN '${rareLastName}' ELSE (${textArray(lastNames)})[1 + (g * 104729) % ${lastNames.length}] END AS last_name,
    (${textArray(domains)})[1 + (g + g / 8) % ${domains.length}] AS domain,
    g % 8 = 0 AS anonymous,
    substr(md5($1::text || g::text), 1, 16) AS anonymous_id
  FROM generate_series(0::bigint, $2::bigint - 1) AS g
), p AS (
  SELECT n.*,
    CASE WHEN anonymous THEN anonymous_id ELSE 'cust-' || lpad(n::text, 7, '0') END AS profile_id,
    CASE WHEN anonymous THEN NULL ELSE lower(first_name || '.' || last_name || n::text || '@' || domain) END AS email,
    now() - make_interval(secs => ($2::int - n) / 1000.0) AS created_at
  FROM n
)
INSERT INTO leads (account_id, profile_kind, profile_id, user_id, anonymous_id, first_name, last_name, email, opt_in_sms,
  opt_in_email, date_identified, points, attributes, attribute_types, own_keys, anonymous_ids, merged_into, search_text,
  version, created_position, created_at, changed_at)
SELECT $1::uuid, CASE WHEN anonymous THEN 'anonymous' ELSE 'user' END, profile_id,
  CASE WHEN anonymous THEN NULL ELSE profile_id END, CASE WHEN anonymous THEN profile_id END,
  CASE WHEN anonymous THEN NULL ELSE first_name END, CASE WHEN anonymous THEN NULL ELSE last_name END, email,
  false, false, created_at, 0,
  CASE WHEN anonymous THEN '{}'::jsonb ELSE jsonb_build_object('plan', (ARRAY['free','pro','team'])[1 + n % 3], 'cohort', 'c' || n % 1000) END,
  CASE WHEN anonymous THEN '{}'::jsonb ELSE '{"plan":"string","cohort":"string"}'::jsonb END,
  CASE WHEN anonymous THEN '{}'::text[] ELSE '{firstName,lastName,email,attributes.plan,attributes.cohort}'::text[] END,
  '{}'::text[], NULL,
  lower(CASE WHEN anonymous THEN profile_id ELSE concat_ws(E'\\n', profile_id, email, first_name, last_name, first_name || ' ' || last_name) END),
  1, $3::bigint + n * $4::bigint, created_at, created_at
FROM p`;

/** Fills an account with `count` leads. */
export async function fillLeads(db: pg.Pool | pg.Client, accountId: string, count: number, firstPosition: number, step: number): Promise<void> {
  await db.query(fillSql, [accountId, count, firstPosition, step]);
}

/** The nth lead of fillLeads (n not a multiple of 8: a known one). */
export const knownLead = (n: number): { userId: string; email: string } => {
  const first = firstNames[(n * 7919) % firstNames.length] as string;
  const last = n % 200000 === 7 ? rareLastName : (lastNames[(n * 104729) % lastNames.length] as string);
  const domain = domains[(n + Math.floor(n / 8)) % domains.length] as string;
  return { userId: `cust-${String(n).padStart(7, '0')}`, email: `${first}.${last}${n}@${domain}`.toLowerCase() };
};
