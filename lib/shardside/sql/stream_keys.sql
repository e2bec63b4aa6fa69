-- The keys an online move's replication stream changed on its target (lib/shardside/stream_keys.hpp):
-- the cut-over compares again only the rows of these keys, while writers wait. Idempotent.
--
-- shardctl.stream_watch: which streams record keys of which table (the table as the moving
-- table's quoted name; a partition's changes are recorded under its root). shardctl.stream_keys:
-- the keys recorded, as text (the key column's value as to_jsonb writes it: for bigint, text
-- and uuid keys, their text form). shardctl.record_stream_key(): the trigger function. Its
-- trigger is enabled REPLICA: it fires in sessions with session_replication_role = replica,
-- which is how a subscription's apply worker writes, and never for the applications'
-- sessions. Without a watch row for its table it records nothing.
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.stream_watch (
  stream text NOT NULL,
  tbl    text NOT NULL,
  PRIMARY KEY (tbl, stream)
);
CREATE TABLE IF NOT EXISTS shardctl.stream_keys (
  stream text NOT NULL,
  tbl    text NOT NULL,
  key    text NOT NULL,
  PRIMARY KEY (stream, tbl, key)
);
-- TG_ARGV[0]: the key column's name; TG_ARGV[1]: the moving table's quoted name.
CREATE OR REPLACE FUNCTION shardctl.record_stream_key() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  w record;
  old_key text;
  new_key text;
BEGIN
  IF TG_OP <> 'INSERT' THEN old_key := to_jsonb(OLD) ->> TG_ARGV[0]; END IF;
  IF TG_OP <> 'DELETE' THEN new_key := to_jsonb(NEW) ->> TG_ARGV[0]; END IF;
  FOR w IN SELECT stream FROM shardctl.stream_watch WHERE tbl = TG_ARGV[1] LOOP
    IF old_key IS NOT NULL THEN
      INSERT INTO shardctl.stream_keys VALUES (w.stream, TG_ARGV[1], old_key) ON CONFLICT DO NOTHING;
    END IF;
    IF new_key IS NOT NULL AND new_key IS DISTINCT FROM old_key THEN
      INSERT INTO shardctl.stream_keys VALUES (w.stream, TG_ARGV[1], new_key) ON CONFLICT DO NOTHING;
    END IF;
  END LOOP;
  RETURN NULL;
END
$fn$;
REVOKE ALL ON FUNCTION shardctl.record_stream_key() FROM PUBLIC;
