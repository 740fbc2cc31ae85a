-- Up Migration

-- The leads list filtered by a custom attribute (`attribute=plan&value=gold`, docs/api.md): a GIN
-- index (jsonb_path_ops) of each unmerged lead's custom attributes under its account's id and its
-- kind, so that a lookup hashes account, kind, key and value together and finds the matching leads
-- of that account (and kind) only, however many leads of another account or kind share the value.
-- The key is made by a function of its own, which the list's query calls word for word (the
-- planner matches an index expression by its text).
CREATE FUNCTION lead_attributes_key(account_id uuid, profile_kind text, attributes jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT jsonb_build_object(account_id::text, jsonb_build_object(profile_kind, attributes))
$$;
CREATE INDEX leads_attributes ON leads USING gin (lead_attributes_key(account_id, profile_kind, attributes) jsonb_path_ops)
  WHERE merged_into IS NULL;
-- Statistics of the key, so that the planner knows a common value from a rare one (without them it
-- takes every value for rare, and reads a third of an account's leads through the index for one).
CREATE STATISTICS leads_attributes_key ON (lead_attributes_key(account_id, profile_kind, attributes)) FROM leads;

-- Down Migration

DROP STATISTICS leads_attributes_key;
DROP INDEX leads_attributes;
DROP FUNCTION lead_attributes_key(uuid, text, jsonb);
