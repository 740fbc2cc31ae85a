-- Up Migration

-- Erasure of a person by crypto-shredding (docs/decisions.md, Erasure). Every event that names a
-- person is stored with its personal fields sealed by that person's key, kept here and nowhere
-- else. Erasing the person sets the key to null (and VACUUM removes the old row version): the
-- events stay, unreadable, with the erasure that did it. A person met again later gets a new key,
-- so at most one key of a person and account is not erased.
CREATE TABLE person_keys (
  key_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts(id),
  -- 'u:<userId>' or 'a:<anonymousId>'
  person_id   text NOT NULL,
  key         bytea,
  created_at  timestamptz NOT NULL DEFAULT now(),
  erasure_id  uuid,
  erased_at   timestamptz,
  CHECK ((key IS NULL) = (erased_at IS NOT NULL))
);
CREATE UNIQUE INDEX person_keys_current ON person_keys (account_id, person_id) WHERE erased_at IS NULL;
CREATE INDEX person_keys_person ON person_keys (account_id, person_id);

-- Erasure requests: a durable job each (src/erasure/runner.ts), run under a lease by any service
-- process, and the account's audit trail of what was erased, when and by whom.
CREATE TABLE erasures (
  id              uuid PRIMARY KEY,
  account_id      uuid NOT NULL REFERENCES accounts(id),
  user_id         text,
  anonymous_id    text,
  suppress        boolean NOT NULL DEFAULT false,
  requested_by    text NOT NULL,
  requested_at    timestamptz NOT NULL DEFAULT now(),
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
  -- When the keys were first erased: the settle wait counts from here.
  keys_erased_at  timestamptz,
  done_at         timestamptz,
  counts          jsonb,
  -- What earlier attempts found and deleted, kept for the counts of the one that finishes.
  progress        jsonb NOT NULL DEFAULT '{}',
  error           text,
  attempts        integer NOT NULL DEFAULT 0,
  lease_owner     text,
  lease_until     timestamptz,
  CHECK (user_id IS NOT NULL OR anonymous_id IS NOT NULL)
);
CREATE INDEX erasures_account ON erasures (account_id, requested_at DESC, id);
CREATE INDEX erasures_pending ON erasures (requested_at) WHERE state = 'pending';

-- Ids whose new items are refused (an erasure with suppress: true).
CREATE TABLE suppressed_ids (
  account_id     uuid NOT NULL REFERENCES accounts(id),
  person_id      text NOT NULL,
  erasure_id     uuid NOT NULL REFERENCES erasures(id),
  suppressed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, person_id)
);

-- Down Migration

DROP TABLE suppressed_ids;
DROP TABLE erasures;
DROP TABLE person_keys;
