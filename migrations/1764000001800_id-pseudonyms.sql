-- Up Migration

-- People's ids kept as pseudonyms (docs/decisions.md, Erasure: ids kept as pseudonyms): wherever
-- something is keyed by a person for good, the key is HMAC-SHA-256 of the id under the account's
-- key below (first 128 bits, base64url; 'u' or 'a', a newline and the id are hashed), as
-- src/eventstore/pseudonyms.ts computes it. The key is kept here, apart from the events.
CREATE TABLE account_id_keys (
  account_id  uuid PRIMARY KEY REFERENCES accounts(id),
  key         bytea NOT NULL CHECK (octet_length(key) = 32),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- What was stored before: converted below with the same pseudonyms, computed here in SQL.
INSERT INTO account_id_keys (account_id, key)
SELECT id, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM accounts;

CREATE FUNCTION pg_temp.xor_pad(key bytea, pad integer) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  block bytea := key || decode(repeat('00', 64 - octet_length(key)), 'hex');
BEGIN
  FOR i IN 0..63 LOOP
    block := set_byte(block, i, get_byte(block, i) # pad);
  END LOOP;
  RETURN block;
END;
$$;

CREATE TEMP TABLE id_pads AS
SELECT account_id, pg_temp.xor_pad(key, 54) AS ipad, pg_temp.xor_pad(key, 92) AS opad FROM account_id_keys;

-- HMAC-SHA-256 (RFC 2104) of kind, newline, id under the account's key: its first 16 bytes, base64url.
CREATE FUNCTION pg_temp.id_ref(account uuid, kind text, id text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT rtrim(translate(encode(substring(sha256(p.opad || sha256(p.ipad || convert_to(kind || E'\n' || id, 'UTF8'))) FROM 1 FOR 16), 'base64'), '+/', '-_'), '=')
  FROM pg_temp.id_pads p WHERE p.account_id = account
$$;

-- Stream names: 'user-' or 'anonymous-', the account id, '-' and the id's pseudonym.
CREATE FUNCTION pg_temp.stream_ref(stream text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN stream LIKE 'user-%' THEN 'user-' || substr(stream, 6, 36) || '-' || pg_temp.id_ref(substr(stream, 6, 36)::uuid, 'u', substr(stream, 43))
    WHEN stream LIKE 'anonymous-%' THEN 'anonymous-' || substr(stream, 11, 36) || '-' || pg_temp.id_ref(substr(stream, 11, 36)::uuid, 'a', substr(stream, 48))
    ELSE stream
  END
$$;

-- The events of the PostgreSQL store: person streams renamed; the ids' pseudonyms added beside the
-- ids, which stay readable in these events until their person is erased (src/erasure/runner.ts).
UPDATE events SET stream_name = pg_temp.stream_ref(stream_name) WHERE stream_name LIKE 'user-%' OR stream_name LIKE 'anonymous-%';
UPDATE events SET data = data
  || CASE WHEN jsonb_typeof(data->'userId') = 'string' THEN jsonb_build_object('userRef', pg_temp.id_ref((metadata->>'accountId')::uuid, 'u', data->>'userId')) ELSE '{}' END
  || CASE WHEN jsonb_typeof(data->'anonymousId') = 'string' THEN jsonb_build_object('anonymousRef', pg_temp.id_ref((metadata->>'accountId')::uuid, 'a', data->>'anonymousId')) ELSE '{}' END
WHERE data ? 'sealed' AND (jsonb_typeof(data->'userId') = 'string' OR jsonb_typeof(data->'anonymousId') = 'string');
-- Events of people already erased: their ids go now.
UPDATE events e SET data = e.data - 'userId' - 'anonymousId'
FROM person_keys k
WHERE e.data ? 'sealed' AND (e.data ? 'userId' OR e.data ? 'anonymousId') AND k.key_id = (e.data->'sealed'->>'k')::bigint AND k.key IS NULL;
-- Sealed events that still hold readable ids (stored before this version): found by their key when their person is erased.
CREATE INDEX events_with_readable_ids ON events (((data->'sealed'->>'k')::bigint)) WHERE data ? 'sealed' AND (data ? 'userId' OR data ? 'anonymousId');

UPDATE track_index SET stream_name = pg_temp.stream_ref(stream_name) WHERE stream_name LIKE 'user-%' OR stream_name LIKE 'anonymous-%';
UPDATE projection_parked_events SET stream_name = pg_temp.stream_ref(stream_name) WHERE stream_name LIKE 'user-%' OR stream_name LIKE 'anonymous-%';
-- Erased events keep their ids' pseudonyms only; rebuilt below.
ALTER TABLE track_index ADD COLUMN user_ref text, ADD COLUMN anonymous_ref text;
INSERT INTO projection_checkpoints (projection, rebuild_requested_at)
SELECT 'track-index', now() WHERE EXISTS (SELECT 1 FROM track_index)
ON CONFLICT (projection) DO UPDATE SET rebuild_requested_at = now();

UPDATE person_keys SET person_id = left(person_id, 2) || pg_temp.id_ref(account_id, left(person_id, 1), substr(person_id, 3));
UPDATE suppressed_ids SET person_id = left(person_id, 2) || pg_temp.id_ref(account_id, left(person_id, 1), substr(person_id, 3));

-- The identity map, keyed by pseudonyms; the ids stay beside them until their person is erased.
ALTER TABLE identity_merges ADD COLUMN anonymous_ref text, ADD COLUMN user_ref text;
UPDATE identity_merges SET anonymous_ref = pg_temp.id_ref(account_id, 'a', anonymous_id), user_ref = pg_temp.id_ref(account_id, 'u', user_id);
ALTER TABLE identity_merges DROP CONSTRAINT identity_merges_pkey;
ALTER TABLE identity_merges
  ALTER COLUMN anonymous_ref SET NOT NULL, ALTER COLUMN user_ref SET NOT NULL,
  ALTER COLUMN anonymous_id DROP NOT NULL, ALTER COLUMN user_id DROP NOT NULL,
  ADD PRIMARY KEY (account_id, anonymous_ref);
DROP INDEX identity_merges_by_user;
CREATE INDEX identity_merges_by_user ON identity_merges (account_id, user_ref);

-- Erasures name their people by pseudonym; the ids are kept only until the erasure is done.
ALTER TABLE erasures ADD COLUMN user_ref text, ADD COLUMN anonymous_ref text;
UPDATE erasures SET user_ref = pg_temp.id_ref(account_id, 'u', user_id) WHERE user_id IS NOT NULL;
UPDATE erasures SET anonymous_ref = pg_temp.id_ref(account_id, 'a', anonymous_id) WHERE anonymous_id IS NOT NULL;
-- A request names its ids; its runner adds their pseudonyms, and the ids go when it is done.
ALTER TABLE erasures DROP CONSTRAINT erasures_check, ADD CONSTRAINT erasures_name_someone CHECK (coalesce(user_id, anonymous_id, user_ref, anonymous_ref) IS NOT NULL);
-- The ids of people erased before this version, in the identity map and in their erasures.
UPDATE identity_merges m SET user_id = NULL, anonymous_id = NULL
FROM erasures x
WHERE x.state = 'done' AND x.account_id = m.account_id AND (x.user_ref = m.user_ref OR x.anonymous_ref = m.anonymous_ref);
UPDATE erasures SET user_id = NULL, anonymous_id = NULL WHERE state = 'done';

DROP FUNCTION pg_temp.stream_ref(text);
DROP FUNCTION pg_temp.id_ref(uuid, text, text);
DROP TABLE pg_temp.id_pads;
DROP FUNCTION pg_temp.xor_pad(bytea, integer);

-- Down Migration

-- A pseudonym cannot be turned back into its id: stream names, person keys and suppressions keep
-- theirs, the identity map drops the merges whose ids were erased, and a done erasure names its
-- people by pseudonym.
DELETE FROM identity_merges WHERE anonymous_id IS NULL OR user_id IS NULL;
ALTER TABLE identity_merges DROP CONSTRAINT identity_merges_pkey;
ALTER TABLE identity_merges
  ALTER COLUMN anonymous_id SET NOT NULL, ALTER COLUMN user_id SET NOT NULL,
  ADD PRIMARY KEY (account_id, anonymous_id);
DROP INDEX identity_merges_by_user;
CREATE INDEX identity_merges_by_user ON identity_merges (account_id, user_id);
ALTER TABLE identity_merges DROP COLUMN anonymous_ref, DROP COLUMN user_ref;

UPDATE erasures SET user_id = user_ref, anonymous_id = anonymous_ref WHERE user_id IS NULL AND anonymous_id IS NULL;
ALTER TABLE erasures DROP CONSTRAINT erasures_name_someone, ADD CHECK (user_id IS NOT NULL OR anonymous_id IS NOT NULL);
ALTER TABLE erasures DROP COLUMN user_ref, DROP COLUMN anonymous_ref;

ALTER TABLE track_index DROP COLUMN user_ref, DROP COLUMN anonymous_ref;
DROP INDEX events_with_readable_ids;
DROP TABLE account_id_keys;
