-- Up Migration

-- The leads list filtered by a custom attribute (`attribute=plan&value=gold`, docs/api.md): a GIN
-- index (jsonb_path_ops) of each unmerged lead's custom attributes under its account's id, so that
-- a lookup hashes account, key and value together and finds that account's matching leads only,
-- however many other accounts share the value. The key is made by a function of its own, which the
-- list's query calls word for word (the planner matches an index expression by its text).
CREATE FUNCTION lead_attributes_key(account_id uuid, attributes jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT jsonb_set('{}'::jsonb, ARRAY[account_id::text], attributes)
$$;
CREATE INDEX leads_attributes ON leads USING gin (lead_attributes_key(account_id, attributes) jsonb_path_ops)
  WHERE merged_into IS NULL;

-- Down Migration

DROP INDEX leads_attributes;
DROP FUNCTION lead_attributes_key(uuid, jsonb);
