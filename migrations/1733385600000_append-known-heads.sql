-- Up Migration

-- As append_events (five arguments), but a stream's head may come from the caller: known_heads,
-- parallel to ids, holds for each event the highest position its stream had when the caller last
-- appended to it (NULL: unknown, looked up as before). A caller knows a head only from its own
-- committed appends, and events are never deleted, so a known head is never above the stored one;
-- one below it (another writer appended meanwhile) makes the first position written collide with a
-- stored one in the (stream_name, stream_position) unique index, and the caller appends again
-- without it. Positions therefore stay gap-free; the locks are taken as before, so no writer of
-- the stream is in flight meanwhile and the collision is raised at once.
CREATE FUNCTION append_events(ids uuid[], stream_names text[], types text[], datas jsonb, metas jsonb, known_heads bigint[])
RETURNS TABLE (out_event_id uuid, out_stream_name text, out_stream_position bigint,
               out_global_position bigint, out_duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM lock_streams(stream_names);

  -- A new statement, so its snapshot sees every event committed by whoever held the locks before.
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(ids, stream_names, types, known_heads) WITH ORDINALITY AS u(id, stream, type, known, ord)
  ),
  heads AS (
    -- CASE evaluates the lookup only for the streams whose head is not known.
    SELECT s.stream,
           CASE WHEN s.known IS NOT NULL THEN s.known
                ELSE (SELECT max(e.stream_position) FROM events e WHERE e.stream_name = s.stream) END AS head
    FROM (SELECT i.stream, max(i.known) AS known FROM input i GROUP BY i.stream) AS s
  ),
  inserted AS (
    INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
    SELECT i.stream, COALESCE(h.head, -1) + row_number() OVER (PARTITION BY i.stream ORDER BY i.ord),
           i.id, i.type, datas->(i.ord::int - 1), metas->(i.ord::int - 1)
    FROM input i JOIN heads h ON h.stream = i.stream
    ORDER BY i.ord
    RETURNING events.event_id, events.stream_name, events.stream_position, events.global_position
  )
  SELECT n.event_id, n.stream_name, n.stream_position, n.global_position, false FROM inserted n;
END;
$$;

-- Down Migration

DROP FUNCTION append_events(uuid[], text[], text[], jsonb, jsonb, bigint[]);
