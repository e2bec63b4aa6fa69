// Catalog version 12: the routing contract applications use (man/shardctl-routing.7). Kept apart
// from schema.cpp because it is a program of its own: SQL functions any language can call.
#include "catalog/schema_routing.hpp"

namespace shardctl::catalog {

// - shards.app_dsn: the address applications use (their PgBouncer, say); NULL: the shard's DSN.
// - op_batches.flip_version: the map version a batch's flip committed; the source's purge
//   raises the shard's route floor to it (lib/shardside/sql/guard.sql).
// - maps.version is bumped once per transaction that changes the map (version_xid records which
//   transaction bumped it; the row lock it takes orders versions as their transactions commit),
//   with a pg_notify on channel shardctl_map_changed, payload 'MAP:VERSION', delivered at commit.
//   A change of a shard's name, DSN, app DSN or status changes every map with a mapping on it.
// - map_log: which mappings each version touched, so map_changes can answer "what changed
//   since V" from the mappings' current rows; the last 1000 versions of a map are kept
//   (maps.log_from: the oldest version map_changes answers from; older: 'reload').
// - route / map_snapshot / map_changes: SECURITY DEFINER, so a role granted EXECUTE on them
//   (and USAGE on the schema: `shardctl init --grant-routing ROLE`) reads nothing else.
//   Every one reads in one statement, hence one snapshot.
constexpr std::string_view v12_routing = R"SQL(
ALTER TABLE shardctl.shards ADD COLUMN app_dsn text CHECK (app_dsn <> '');
ALTER TABLE shardctl.op_batches ADD COLUMN flip_version bigint;
ALTER TABLE shardctl.maps ADD COLUMN version_xid xid8, ADD COLUMN log_from bigint;
UPDATE shardctl.maps SET log_from = version;
ALTER TABLE shardctl.maps ALTER COLUMN log_from SET DEFAULT 1, ALTER COLUMN log_from SET NOT NULL;

CREATE TABLE shardctl.map_log (
  map_id     bigint NOT NULL REFERENCES shardctl.maps ON DELETE CASCADE,
  version    bigint NOT NULL,
  mapping_id bigint NOT NULL,
  PRIMARY KEY (map_id, version, mapping_id)
);

-- One change of `map` touching `mapping` (a mapping id) in the current transaction: the first
-- bumps the version and notifies; every one logs the mapping under that version.
CREATE FUNCTION shardctl.map_changed(map bigint, mapping bigint) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  v bigint;
  n text;
BEGIN
  UPDATE shardctl.maps m SET version = m.version + 1, version_xid = pg_current_xact_id()
   WHERE m.map_id = map AND m.version_xid IS DISTINCT FROM pg_current_xact_id()
   RETURNING m.version, m.name INTO v, n;
  IF FOUND THEN
    PERFORM pg_notify('shardctl_map_changed', n || ':' || v);
    IF v % 100 = 0 THEN
      DELETE FROM shardctl.map_log l WHERE l.map_id = map AND l.version <= v - 1000;
      UPDATE shardctl.maps m SET log_from = v - 1000 WHERE m.map_id = map AND m.log_from < v - 1000;
    END IF;
  ELSE
    SELECT m.version INTO v FROM shardctl.maps m WHERE m.map_id = map;
    IF NOT FOUND THEN RETURN; END IF;  -- the map itself is being dropped
  END IF;
  INSERT INTO shardctl.map_log VALUES (map, v, mapping) ON CONFLICT DO NOTHING;
END
$fn$;

CREATE OR REPLACE FUNCTION shardctl.bump_map_version() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD IS NOT DISTINCT FROM NEW THEN RETURN NULL; END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM shardctl.map_changed(OLD.map_id, OLD.mapping_id);
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.map_id IS DISTINCT FROM OLD.map_id) THEN
    PERFORM shardctl.map_changed(NEW.map_id, NEW.mapping_id);
  END IF;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION shardctl.shard_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF (NEW.name, NEW.dsn, NEW.app_dsn, NEW.status) IS DISTINCT FROM (OLD.name, OLD.dsn, OLD.app_dsn, OLD.status) THEN
    PERFORM shardctl.map_changed(m.map_id, m.mapping_id)
       FROM shardctl.mappings m WHERE m.shard_id = NEW.shard_id ORDER BY m.map_id, m.mapping_id;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER shards_bump_map_version AFTER UPDATE ON shardctl.shards
  FOR EACH ROW EXECUTE FUNCTION shardctl.shard_changed();

-- A mapping's bounds as text, in the map's route space (hash values for hash maps): low is
-- inclusive, high exclusive, NULL unbounded. A point (list maps) is its key in low, high NULL.
CREATE FUNCTION shardctl.mapping_low(m shardctl.mappings) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT coalesce(lower(m.int_range)::text, lower(m.text_range), lower(m.uuid_range)::text)
$fn$;
CREATE FUNCTION shardctl.mapping_high(m shardctl.mappings) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT CASE WHEN m.is_point THEN NULL
              ELSE coalesce(upper(m.int_range)::text, upper(m.text_range), upper(m.uuid_range)::text) END
$fn$;

-- The map's id, kind, key type and version; an unknown or NULL name is an error.
CREATE FUNCTION shardctl.routing_map(map text, OUT map_id bigint, OUT kind text, OUT key_type text, OUT version bigint)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF map IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004', MESSAGE = 'shardctl: the map name is NULL';
  END IF;
  SELECT m.map_id, m.kind, m.key_type, m.version INTO map_id, kind, key_type, version
    FROM shardctl.maps m WHERE m.name = map;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('shardctl: unknown map %s', quote_literal(map)),
      HINT = '`shardctl map list` names the maps';
  END IF;
END
$fn$;

CREATE FUNCTION shardctl.route(map text, key text, OUT shard text, OUT dsn text, OUT status text, OUT is_point boolean,
                               OUT low text, OUT high text, OUT version bigint, OUT hash bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
#variable_conflict use_column
DECLARE
  m record;
  n numeric;
  r bigint;
  u uuid;
  hit shardctl.mappings;
BEGIN
  m := shardctl.routing_map(map);
  version := m.version;
  IF key IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004',
      MESSAGE = format('shardctl: the key is NULL (map %s has key type %s)', map, m.key_type);
  END IF;
  -- Keys parse exactly as `shardctl lookup` parses them (lib/routing/key.cpp): decimal digits
  -- with an optional minus, nothing else; uuids in PostgreSQL's input grammar.
  IF m.key_type IN ('int', 'bigint') THEN
    IF key COLLATE "C" !~ '^-?[0-9]+$' THEN
      n := NULL;
    ELSE
      n := key::numeric;
      IF m.key_type = 'int' AND n NOT BETWEEN -2147483648 AND 2147483647 THEN n := NULL; END IF;
      IF n NOT BETWEEN -9223372036854775808 AND 9223372036854775807 THEN n := NULL; END IF;
    END IF;
    IF n IS NULL THEN
      RAISE EXCEPTION USING ERRCODE = '22P02',
        MESSAGE = format('shardctl: %s is not a valid %s key (map %s has key type %s)', quote_literal(left(key, 80)), m.key_type, map, m.key_type);
    END IF;
    r := n::bigint;
    IF m.kind = 'hash' THEN
      r := CASE m.key_type WHEN 'int' THEN hashint4extended(r::int4, 0) ELSE hashint8extended(r, 0) END;
      hash := r;
    END IF;
  ELSIF m.key_type = 'uuid' THEN
    IF key COLLATE "C" !~ '^([0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7}|\{[0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7}\})$' THEN
      RAISE EXCEPTION USING ERRCODE = '22P02',
        MESSAGE = format('shardctl: %s is not a valid uuid key (map %s has key type uuid)', quote_literal(left(key, 80)), map);
    END IF;
    u := key::uuid;
    IF m.kind = 'hash' THEN r := uuid_hash_extended(u, 0); hash := r; END IF;
  ELSIF m.kind = 'hash' THEN
    r := hashtextextended(key COLLATE "C", 0);
    hash := r;
  END IF;

  IF r IS NOT NULL THEN
    SELECT * INTO hit FROM shardctl.mappings g WHERE g.map_id = m.map_id AND g.int_range @> r;
  ELSIF m.key_type = 'uuid' THEN
    SELECT * INTO hit FROM shardctl.mappings g WHERE g.map_id = m.map_id AND g.uuid_range @> u;
  ELSE
    SELECT * INTO hit FROM shardctl.mappings g WHERE g.map_id = m.map_id AND g.text_range @> (key COLLATE "C");
  END IF;
  IF hit.mapping_id IS NULL THEN
    status := 'unmapped';
    RETURN;
  END IF;
  SELECT s.name, coalesce(s.app_dsn, s.dsn) INTO shard, dsn FROM shardctl.shards s WHERE s.shard_id = hit.shard_id;
  status := hit.status;
  is_point := hit.is_point;
  low := shardctl.mapping_low(hit);
  high := shardctl.mapping_high(hit);
END
$fn$;

CREATE FUNCTION shardctl.route(map text, key bigint, OUT shard text, OUT dsn text, OUT status text, OUT is_point boolean,
                               OUT low text, OUT high text, OUT version bigint, OUT hash bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT * FROM shardctl.route(map, key::text)
$fn$;

CREATE FUNCTION shardctl.route(map text, key uuid, OUT shard text, OUT dsn text, OUT status text, OUT is_point boolean,
                               OUT low text, OUT high text, OUT version bigint, OUT hash bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT * FROM shardctl.route(map, key::text)
$fn$;

-- Every mapping of the map, with the map's version, kind and key type on each row; a map with
-- no mapping gives one row whose mapping_id is NULL.
CREATE FUNCTION shardctl.map_snapshot(map text)
RETURNS TABLE (version bigint, kind text, key_type text, mapping_id bigint, shard text, dsn text, shard_status text,
               status text, is_point boolean, low text, high text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  PERFORM shardctl.routing_map(map);
  RETURN QUERY
    SELECT m.version, m.kind, m.key_type, g.mapping_id, s.name, coalesce(s.app_dsn, s.dsn), s.status,
           g.status, g.is_point, shardctl.mapping_low(g), shardctl.mapping_high(g)
      FROM shardctl.maps m
      LEFT JOIN shardctl.mappings g ON g.map_id = m.map_id
      LEFT JOIN shardctl.shards s ON s.shard_id = g.shard_id
     WHERE m.name = map
     ORDER BY g.mapping_id;
END
$fn$;

-- What changed since version `since`: one row per mapping touched since, 'upsert' with its
-- current row or 'delete'; or one row 'reload' when `since` is older than the log or newer
-- than the map. No row: nothing changed. Every row carries the map's current version.
CREATE FUNCTION shardctl.map_changes(map text, since bigint)
RETURNS TABLE (version bigint, change text, mapping_id bigint, shard text, dsn text, shard_status text,
               status text, is_point boolean, low text, high text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  PERFORM shardctl.routing_map(map);
  IF since IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004', MESSAGE = format('shardctl: map_changes(%s, NULL): the version is NULL', quote_literal(map)),
      HINT = 'start from shardctl.map_snapshot()';
  END IF;
  RETURN QUERY
    WITH m AS (SELECT * FROM shardctl.maps m WHERE m.name = map),
         stale AS (SELECT m.version FROM m WHERE since < m.log_from OR since > m.version),
         touched AS (SELECT DISTINCT l.mapping_id FROM shardctl.map_log l, m
                      WHERE l.map_id = m.map_id AND l.version > since AND NOT EXISTS (SELECT FROM stale))
    SELECT stale.version, 'reload'::text, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::boolean,
           NULL::text, NULL::text
      FROM stale
    UNION ALL
    SELECT m.version, CASE WHEN g.mapping_id IS NULL THEN 'delete' ELSE 'upsert' END, t.mapping_id, s.name,
           coalesce(s.app_dsn, s.dsn), s.status, g.status, g.is_point, shardctl.mapping_low(g), shardctl.mapping_high(g)
      FROM touched t CROSS JOIN m
      LEFT JOIN shardctl.mappings g ON g.mapping_id = t.mapping_id AND g.map_id = m.map_id
      LEFT JOIN shardctl.shards s ON s.shard_id = g.shard_id;
END
$fn$;

-- No function of the schema is PUBLIC's, the range types' constructors included: a routing role
-- executes the five it is granted and nothing else.
DO $do$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = 'shardctl'::regnamespace LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END
$do$;
ALTER DEFAULT PRIVILEGES IN SCHEMA shardctl REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
)SQL";

std::string_view routing_contract_sql() noexcept { return v12_routing; }

}  // namespace shardctl::catalog
