-- shardctl's write guard on a shard (lib/shardside/guard.hpp; what it refuses is in
-- lib/migrate/guard.hpp): schema shardctl, the range table, and the trigger functions.
-- Idempotent; its version is a hash of this file's text (shardside::guard_version()), kept as
-- the comment on shardctl.guard_hit, so any change here reaches shards at their next guard.
--
-- Bounds are kept as text and compared after a cast chosen by the trigger's `how` argument,
-- so one function serves every key type and map kind. The functions are SECURITY DEFINER:
-- the application's role needs no privilege on schema shardctl and cannot write to it, so
-- the only bypass is a purge transaction whose xid the owning operation recorded.
-- guard_hit is VOLATILE so that, under READ COMMITTED, every call sees ranges committed
-- before it, not only those committed before the writer's statement began.
-- guard_rows is the statement-level guard of plain tables: one AFTER trigger per event, each
-- with its transition table (shardctl_old / shardctl_new), checks the statement's keys in one
-- set-based query; an error there rolls the whole statement back, so nothing it wrote stays.
-- It costs well under a microsecond a row where the row trigger guard() costs ~20 us, which
-- matters for shardctl's own bulk statements (the purge, and loads into a shard holding
-- fences). guard() stays for partitioned tables: a row trigger is cloned to every partition,
-- present or attached later, where statement triggers fire only on the table a statement names.
--
-- A range in state 'cutover' is an online move's cut-over (lib/migrate/online.hpp): a write to
-- it waits in await_cutover() for the advisory lock shardctl's cut-over session holds, at most
-- --cutover-timeout as shardctl keeps it (10 s here if shardctl hangs), then looks again: a
-- fence (the keys moved: refused, naming the new shard), nothing (the cut-over gave up: the
-- write goes on), or the range still in cut-over (shardctl died holding it: refused as offline).
-- Under REPEATABLE READ the second look sees the first one's snapshot, so such a write is
-- refused: never let through on a shard that may have given its keys away.
--
-- Route floors (man/shardctl-split.1, "What applications see"): a transaction may state the
-- map version it routed by in the setting shardctl.route ('customers:42,products:7'). A shard
-- that gave keys of a map away keeps, in shardctl.route_floors, the version of the flip that
-- moved them: the oldest version a router may hold and still write here. The triggers refuse a
-- write whose stated version of their map is older (before they look at ranges), and
-- assert_route refuses it at once, so a transaction that only reads can be checked too. A
-- value that is not the grammar is refused (22023), never taken as "no version"; NULL or ''
-- (what the setting reads once the transaction that set it ended) is "no version", and then
-- nothing is checked: the triggers read the setting once and go on.
--
-- Every refusal (refuse()) keeps SQLSTATE 55000 and carries a constraint name, shardctl_moving,
-- shardctl_fenced or shardctl_stale_route, and a JSON DETAIL.
--
-- The DROPs remove what earlier versions installed (shardctl.offline_ranges, guard_blocks).
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.guard_ranges (
  range_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  op_id      uuid NOT NULL,
  map_id     bigint NOT NULL,
  batch_no   integer NOT NULL,
  lo         text,
  hi         text,
  state      text NOT NULL CHECK (state IN ('offline', 'fenced', 'cutover')),
  new_shard  text NOT NULL,
  purge_xid  xid8,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS guard_ranges_map ON shardctl.guard_ranges (map_id);
CREATE INDEX IF NOT EXISTS guard_ranges_op ON shardctl.guard_ranges (op_id, batch_no);
REVOKE ALL ON shardctl.guard_ranges FROM PUBLIC;
-- Tables made by a version without 'cutover' get the CHECK above (its default name).
ALTER TABLE shardctl.guard_ranges DROP CONSTRAINT IF EXISTS guard_ranges_state_check;
ALTER TABLE shardctl.guard_ranges ADD CONSTRAINT guard_ranges_state_check
  CHECK (state IN ('offline', 'fenced', 'cutover'));
-- More transactions a range lets through, beside its purge_xid: a purge split over two source
-- sessions (lib/migrate/purge.cpp), each deleting some of the tables in a transaction of its
-- own; the one that commits last turns the range into a fence, so neither may update the
-- range's row before. A row here outlives its transaction harmlessly (an xid8 is never used
-- again) and goes with its range.
CREATE TABLE IF NOT EXISTS shardctl.guard_bypass (
  range_id bigint NOT NULL REFERENCES shardctl.guard_ranges ON DELETE CASCADE,
  xid      xid8 NOT NULL,
  PRIMARY KEY (range_id, xid)
);
REVOKE ALL ON shardctl.guard_bypass FROM PUBLIC;
-- The map's name, for the refusals' DETAIL (NULL on ranges an earlier version added).
ALTER TABLE shardctl.guard_ranges ADD COLUMN IF NOT EXISTS map_name text;
-- The oldest map version a router may hold to write here, per map (see the top). A purge
-- raises it to its batches' flip version in the transaction that fences them
-- (lib/migrate/purge.cpp); nothing lowers it, and it outlives the fences (fence_grace, `op
-- unfence`): while it exists, the map's tables keep a trigger that checks it, the light one
-- (guard_route, below) once the map has no range here (lib/migrate/guard.hpp).
CREATE TABLE IF NOT EXISTS shardctl.route_floors (
  map_id      bigint PRIMARY KEY,
  map_name    text NOT NULL,
  min_version bigint NOT NULL,
  op_id       uuid,
  new_shard   text,
  raised_at   timestamptz
);
REVOKE ALL ON shardctl.route_floors FROM PUBLIC;
DROP TABLE IF EXISTS shardctl.offline_ranges;
DROP FUNCTION IF EXISTS shardctl.guard_blocks(text, text);

-- Whether this session is the apply worker of a shardctl subscription (an online move into
-- this shard): fences do not apply to it. A shard that once gave keys away fences them; when
-- an online move brings them back, the fence refuses applications until the flip, but the
-- stream's changes must land (the copy is let through by purge_xid, lib/migrate/guard.hpp).
-- Only a session in session_replication_role = replica asks pg_stat_subscription.
CREATE OR REPLACE FUNCTION shardctl.applying_stream() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT current_setting('session_replication_role') = 'replica'
     AND EXISTS (SELECT 1 FROM pg_stat_subscription s WHERE s.pid = pg_backend_pid() AND s.subname LIKE 'shardctl\_op\_%')
$fn$;

-- Whether this transaction is one of the range's purge transactions recorded in guard_bypass.
CREATE OR REPLACE FUNCTION shardctl.bypasses(range bigint) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT EXISTS (SELECT FROM shardctl.guard_bypass b WHERE b.range_id = range AND b.xid = pg_current_xact_id_if_assigned())
$fn$;
REVOKE ALL ON FUNCTION shardctl.bypasses(bigint) FROM PUBLIC;

-- The ranges that apply to this transaction's writes, written once for every trigger below:
-- not the owning operation's purge transaction (its xid is the range's purge_xid), not fences
-- while this session applies a shardctl stream, not fences past their grace (expires_at). The
-- purge transactions of guard_bypass (bypasses()) are let through by the triggers' functions,
-- only for a range a write hits: checked in this view, which guard_hit reads for every row,
-- they cost applications' inserts 11% while a fence stood (2.6 us a row).
CREATE OR REPLACE VIEW shardctl.ranges_in_force AS
  SELECT g.* FROM shardctl.guard_ranges g
   WHERE (g.purge_xid IS NULL OR pg_current_xact_id_if_assigned() IS NULL OR g.purge_xid <> pg_current_xact_id_if_assigned())
     AND (g.state <> 'fenced' OR NOT shardctl.applying_stream())
     AND (g.expires_at IS NULL OR g.expires_at > now());
REVOKE ALL ON shardctl.ranges_in_force FROM PUBLIC;

CREATE OR REPLACE FUNCTION shardctl.guard_hit(map bigint, v text, how text) RETURNS shardctl.guard_ranges
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  h bigint;
  r shardctl.guard_ranges;
BEGIN
  IF v IS NULL THEN RETURN r; END IF;
  IF how = 'text' THEN
    SELECT * INTO r FROM shardctl.ranges_in_force g
     WHERE g.map_id = map
       AND (g.lo IS NULL OR v COLLATE "C" >= g.lo COLLATE "C") AND (g.hi IS NULL OR v COLLATE "C" < g.hi COLLATE "C")
     ORDER BY g.state <> 'fenced' DESC LIMIT 1;
  ELSIF how = 'uuid' THEN
    SELECT * INTO r FROM shardctl.ranges_in_force g
     WHERE g.map_id = map
       AND (g.lo IS NULL OR v::uuid >= g.lo::uuid) AND (g.hi IS NULL OR v::uuid < g.hi::uuid)
     ORDER BY g.state <> 'fenced' DESC LIMIT 1;
  ELSE
    CASE how
      WHEN 'int' THEN h := v::bigint;
      WHEN 'hash_int' THEN h := hashint4extended(v::int4, 0);
      WHEN 'hash_bigint' THEN h := hashint8extended(v::int8, 0);
      WHEN 'hash_text' THEN h := hashtextextended(v COLLATE "C", 0);
      WHEN 'hash_uuid' THEN h := uuid_hash_extended(v::uuid, 0);
      ELSE RAISE EXCEPTION 'shardctl guard: unknown key kind %', how;
    END CASE;
    SELECT * INTO r FROM shardctl.ranges_in_force g
     WHERE g.map_id = map
       AND (g.lo IS NULL OR h >= g.lo::bigint) AND (g.hi IS NULL OR h < g.hi::bigint)
     ORDER BY g.state <> 'fenced' DESC LIMIT 1;
  END IF;
  -- A purge transaction of the range recorded in guard_bypass passes it (a purge split over
  -- two sessions, lib/migrate/purge.cpp). A batch's range overlaps no other range of its map
  -- on the shard (a shard holds the keys it moves, and fences only keys it gave away). Two
  -- IFs: the outer one is a simple expression, which PL/pgSQL evaluates without the executor.
  IF r.range_id IS NOT NULL THEN
    IF shardctl.bypasses(r.range_id) THEN
      r := NULL;
    END IF;
  END IF;
  RETURN r;
END
$fn$;

-- The advisory lock (bigint form) a cut-over of the operation's batch holds on the shard.
CREATE OR REPLACE FUNCTION shardctl.cutover_lock(op uuid, batch integer) RETURNS bigint
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
  SELECT hashtextextended('shardctl cutover ' || op::text || ' ' || batch::text, 0)
$fn$;

-- Waits until the batch's cut-over is over (its lock free), at most lock_timeout; the shared
-- lock is then held to the end of the writer's transaction, so the next cut-over of the batch
-- waits for the writes let through by this one.
CREATE OR REPLACE FUNCTION shardctl.await_cutover(op uuid, batch integer) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '10s' AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(shardctl.cutover_lock(op, batch));
EXCEPTION WHEN lock_not_available THEN
  NULL;  -- the caller looks at the range again and refuses the write
END
$fn$;

-- A shardctl.route value that is not the grammar: 22023, constraint shardctl_bad_route.
CREATE OR REPLACE FUNCTION shardctl.bad_route(route text, why text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  RAISE EXCEPTION USING ERRCODE = '22023', CONSTRAINT = 'shardctl_bad_route',
    MESSAGE = format('shardctl.route = %s is not a list of MAP:VERSION: %s',
                     quote_literal(CASE WHEN length(route) > 80 THEN left(route, 80) || '...' ELSE route END), why),
    HINT = 'state the map version the transaction routed by, e.g. SET LOCAL shardctl.route = ''customers:42,products:7''';
END
$fn$;

-- Whether a shardctl.route value is the grammar and no part of it is long enough to be
-- refused for its length: items MAP:VERSION joined by ',', MAP [A-Za-z_][A-Za-z0-9_.-]{0,62},
-- VERSION decimal digits that fit a bigint. False does not mean malformed: stated_version then
-- decides, item by item. A regular expression with bounded repeats costs PostgreSQL ~14 us a
-- match (its automaton is built afresh each time), the unbounded ones here ~1 us; lengths are
-- only looked for in a value long enough to hold one (a 19-digit number: 21 characters, a
-- 64-character name: 66). An SQL function, so the planner inlines it where it is called.
CREATE OR REPLACE FUNCTION shardctl.route_plain(route text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $fn$
  SELECT route ~ '^[A-Za-z_][A-Za-z0-9_.-]*:[0-9]+(,[A-Za-z_][A-Za-z0-9_.-]*:[0-9]+)*$'
     AND (length(route) < 21 OR route !~ '[0-9]{19}')
     AND (length(route) < 66 OR route !~ '[^:,]{64}')
$fn$;

-- The version a shardctl.route value states for map `map_name` (the lowest where it names the
-- map twice); NULL when it names none, or is NULL or '' (no version stated). A value that is
-- not the grammar (route_plain) is refused: 22023, shardctl_bad_route, never taken as "no
-- version".
CREATE OR REPLACE FUNCTION shardctl.stated_version(route text, map_name text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  item text;
  v bigint;
BEGIN
  IF route IS NULL OR route = '' THEN RETURN NULL; END IF;
  IF NOT shardctl.route_plain(route) THEN
    IF route !~ '^[A-Za-z_][A-Za-z0-9_.-]*:[0-9]+(,[A-Za-z_][A-Za-z0-9_.-]*:[0-9]+)*$' THEN
      PERFORM shardctl.bad_route(route, 'MAP is [A-Za-z_][A-Za-z0-9_.-]{0,62}, VERSION decimal digits, items joined by '','' without spaces');
    END IF;
    FOREACH item IN ARRAY string_to_array(route, ',') LOOP
      IF length(split_part(item, ':', 1)) > 63 THEN
        PERFORM shardctl.bad_route(route, 'a map name is at most 63 characters');
      END IF;
      -- Two IFs: SQL does not promise to evaluate OR left to right, and a number of 131072
      -- digits or more is not even a numeric.
      IF length(split_part(item, ':', 2)) > 19 THEN
        PERFORM shardctl.bad_route(route, 'version ' || left(split_part(item, ':', 2), 40) || '... is out of range');
      END IF;
      IF split_part(item, ':', 2)::numeric > 9223372036854775807 THEN
        PERFORM shardctl.bad_route(route, 'version ' || split_part(item, ':', 2) || ' is out of range');
      END IF;
    END LOOP;
  END IF;
  IF map_name IS NULL THEN RETURN NULL; END IF;
  FOREACH item IN ARRAY string_to_array(route, ',') LOOP
    IF split_part(item, ':', 1) = map_name THEN
      v := least(v, split_part(item, ':', 2)::bigint);
    END IF;
  END LOOP;
  RETURN v;
END
$fn$;

-- Every refusal of the guard: SQLSTATE 55000, the constraint shardctl_<state> and a JSON DETAIL
-- (man/shardctl-split.1, "What applications see"). `state`: moving (an offline or cut-over
-- range: retry in a moment), fenced (moved away: reload the map, go to the new owner) or
-- stale_route (reload the map to at least min_version). The map's name and, for a fence, the
-- floor come from route_floors where the caller has none; the stated version from shardctl.route.
CREATE OR REPLACE FUNCTION shardctl.refuse(state text, message text, hint text, map bigint, map_name text, op uuid,
                                           new_owner text, min_version bigint, key text, tbl text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  f shardctl.route_floors;
  n text := map_name;
  floor bigint := min_version;
BEGIN
  IF n IS NULL OR (state = 'fenced' AND floor IS NULL) THEN
    SELECT * INTO f FROM shardctl.route_floors g WHERE g.map_id = map;
    n := coalesce(n, f.map_name);
    IF state = 'fenced' THEN floor := f.min_version; END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = message, HINT = hint, CONSTRAINT = 'shardctl_' || state,
    DETAIL = json_build_object('state', state, 'map', n, 'map_id', map, 'operation', op, 'new_owner', new_owner,
                               'min_version', floor,
                               'stated_version', shardctl.stated_version(current_setting('shardctl.route', true), n),
                               'key', key, 'table', tbl)::text;
END
$fn$;

-- The triggers' stale-route check, for a transaction that states a version (route, non-empty):
-- a malformed value is refused; one that states a version of the map older than this shard's
-- floor for it is refused (shardctl_stale_route), whichever key it writes. VOLATILE, as
-- guard_hit: it sees a floor committed since the writer's statement began.
CREATE OR REPLACE FUNCTION shardctl.check_route(map bigint, route text, key text, tbl text) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  f shardctl.route_floors;
  item text;
  stated bigint;
BEGIN
  -- stated_version's work, inline where the value is plain: a function call less, on the
  -- path every statement that states a version takes (bench/README.md, the stale-route check).
  IF NOT shardctl.route_plain(route) THEN PERFORM shardctl.stated_version(route, NULL); END IF;
  SELECT * INTO f FROM shardctl.route_floors g WHERE g.map_id = map;
  IF f.map_id IS NULL THEN RETURN; END IF;
  FOREACH item IN ARRAY string_to_array(route, ',') LOOP
    IF split_part(item, ':', 1) = f.map_name THEN
      stated := least(stated, split_part(item, ':', 2)::bigint);
    END IF;
  END LOOP;
  IF stated < f.min_version THEN
    PERFORM shardctl.refuse('stale_route',
      format('this shard refuses writes routed by version %s of map %s: shardctl operation %s moved keys of the map from it to shard %s at version %s',
             stated, f.map_name, f.op_id, f.new_shard, f.min_version),
      format('reload map %s (version %s or later), route again and retry', f.map_name, f.min_version),
      map, f.map_name, f.op_id, f.new_shard, f.min_version, key, tbl);
  END IF;
END
$fn$;

-- For applications (EXECUTE granted to PUBLIC, below): states `version` of `map` for this
-- transaction, merged into shardctl.route as SET LOCAL would set it, and refuses at once when
-- it is older than this shard's floor for the map, so a transaction that only reads is checked
-- too. Returns the floor (0: none). A map's floor is found by name here (an application knows
-- no map id); two maps once of that name: the higher floor.
CREATE OR REPLACE FUNCTION shardctl.assert_route(map text, version bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  route text := current_setting('shardctl.route', true);
  f shardctl.route_floors;
BEGIN
  IF map IS NULL OR version IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004',
      MESSAGE = format('shardctl.assert_route(%s, %s): the map and its version are required',
                       coalesce(quote_literal(map), 'NULL'), coalesce(version::text, 'NULL'));
  END IF;
  IF map !~ '^[A-Za-z_][A-Za-z0-9_.-]{0,62}$' OR version < 0 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', CONSTRAINT = 'shardctl_bad_route',
      MESSAGE = format('shardctl.assert_route(%s, %s): %s', quote_literal(CASE WHEN length(map) > 80 THEN left(map, 80) || '...' ELSE map END), version,
                       CASE WHEN version < 0 THEN 'a version is not negative' ELSE 'a map name is [A-Za-z_][A-Za-z0-9_.-]{0,62}' END);
  END IF;
  PERFORM shardctl.stated_version(route, NULL);  -- a malformed value stated before is refused
  route := array_to_string(ARRAY(SELECT i FROM unnest(string_to_array(route, ',')) i WHERE split_part(i, ':', 1) <> map), ',');
  PERFORM set_config('shardctl.route', concat_ws(',', nullif(route, ''), map || ':' || version), true);
  SELECT * INTO f FROM shardctl.route_floors g WHERE g.map_name = map ORDER BY g.min_version DESC LIMIT 1;
  IF version < f.min_version THEN
    PERFORM shardctl.refuse('stale_route',
      format('this shard refuses version %s of map %s: shardctl operation %s moved keys of the map from it to shard %s at version %s',
             version, f.map_name, f.op_id, f.new_shard, f.min_version),
      format('reload map %s (version %s or later), route again and retry', f.map_name, f.min_version),
      f.map_id, f.map_name, f.op_id, f.new_shard, f.min_version, NULL, NULL);
  END IF;
  RETURN coalesce(f.min_version, 0);
END
$fn$;

-- A write to a key of a range refused: moving (offline or cutover) or fenced.
CREATE OR REPLACE FUNCTION shardctl.refuse_range(state text, map bigint, map_name text, op uuid, new_shard text, key text,
                                                 sch name, tbl name) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF state <> 'fenced' THEN
    PERFORM shardctl.refuse('moving',
      format('key %s of %s.%s is being moved by shardctl operation %s to shard %s; writes to it are refused until its batch is done',
             key, sch, tbl, op, new_shard),
      'retry in a moment with a fresh shard map (`shardctl lookup`)', map, map_name, op, new_shard, NULL, key, sch || '.' || tbl);
  END IF;
  PERFORM shardctl.refuse('fenced',
    format('key %s of %s.%s has moved to shard %s (shardctl operation %s); this shard no longer accepts writes to it',
           key, sch, tbl, new_shard, op),
    'reload the shard map and write to shard ' || new_shard, map, map_name, op, new_shard, NULL, key, sch || '.' || tbl);
END
$fn$;

CREATE OR REPLACE FUNCTION shardctl.guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  map bigint := TG_ARGV[0]::bigint;
  col text := TG_ARGV[1];
  how text := TG_ARGV[2];
  new_key text := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) ->> col END;
  old_key text := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) ->> col END;
  v text;
  hit shardctl.guard_ranges;
  route text := current_setting('shardctl.route', true);
BEGIN
  -- The stale-route check first: a router that holds an older map than this shard gave keys
  -- away at is told so, whichever key it writes. For every row of a partitioned table (its
  -- trigger's fourth argument: no statement trigger of shardctl's fires on a partition); on a
  -- plain table guard_rows checks it once a statement, and here only a refusal does, first.
  IF route <> '' AND TG_NARGS > 3 THEN
    PERFORM shardctl.check_route(map, route, coalesce(new_key, old_key), TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  FOREACH v IN ARRAY CASE WHEN new_key IS NOT DISTINCT FROM old_key THEN ARRAY[new_key] ELSE ARRAY[new_key, old_key] END LOOP
    hit := shardctl.guard_hit(map, v, how);
    IF hit.state = 'cutover' THEN
      PERFORM shardctl.await_cutover(hit.op_id, hit.batch_no);
      hit := shardctl.guard_hit(map, v, how);
    END IF;
    IF hit.range_id IS NULL THEN CONTINUE; END IF;
    IF route <> '' AND TG_NARGS <= 3 THEN
      PERFORM shardctl.check_route(map, route, v, TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
    END IF;
    PERFORM shardctl.refuse_range(hit.state, map, hit.map_name, hit.op_id, hit.new_shard, v, TG_TABLE_SCHEMA, TG_TABLE_NAME);
  END LOOP;
  RETURN coalesce(NEW, OLD);
END
$fn$;

CREATE OR REPLACE FUNCTION shardctl.guard_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  map bigint := TG_ARGV[0]::bigint;
  col text := quote_ident(TG_ARGV[1]);
  k text := 's.k';
  how text := TG_ARGV[2];
  route text;
  bound text;
  keys text;
  q text;
  hit record;
  stated text := current_setting('shardctl.route', true);
BEGIN
  -- The stale-route check first, once a statement (see guard()); the statement's keys are not
  -- read for it, so its refusal names none.
  IF stated <> '' THEN
    PERFORM shardctl.check_route(map, stated, NULL, TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  -- Most statements run while the map has no range this transaction is not exempt from.
  PERFORM FROM shardctl.ranges_in_force g WHERE g.map_id = map LIMIT 1;
  IF NOT FOUND THEN RETURN NULL; END IF;
  -- The route value of key column k: the key itself, its hash, or its text in byte order
  -- (a uuid's canonical text sorts like its bytes, and min/max have no uuid form). Text is
  -- hashed and compared under COLLATE "C", as the client routes it: k keeps the column's
  -- collation, and a nondeterministic one would hash its sort key instead of the bytes.
  CASE how
    WHEN 'int' THEN route := k || '::bigint'; bound := '::bigint';
    WHEN 'hash_int' THEN route := 'hashint4extended(' || k || '::int4, 0)'; bound := '::bigint';
    WHEN 'hash_bigint' THEN route := 'hashint8extended(' || k || '::int8, 0)'; bound := '::bigint';
    WHEN 'hash_text' THEN route := 'hashtextextended(' || k || '::text COLLATE "C", 0)'; bound := '::bigint';
    WHEN 'hash_uuid' THEN route := 'uuid_hash_extended(' || k || '::uuid, 0)'; bound := '::bigint';
    WHEN 'text' THEN route := k || '::text COLLATE "C"'; bound := ' COLLATE "C"';
    WHEN 'uuid' THEN route := k || '::uuid::text COLLATE "C"'; bound := '::uuid::text COLLATE "C"';
    ELSE RAISE EXCEPTION 'shardctl guard: unknown key kind %', how;
  END CASE;
  keys := CASE TG_OP WHEN 'INSERT' THEN 'SELECT ' || col || ' AS k FROM shardctl_new'
                     WHEN 'DELETE' THEN 'SELECT ' || col || ' AS k FROM shardctl_old'
                     ELSE 'SELECT ' || col || ' AS k FROM shardctl_old UNION ALL SELECT ' || col || ' AS k FROM shardctl_new' END;
  -- Ranges are matched against the envelope (min..max route value) of the statement's keys
  -- first: a batch statement of shardctl (purge, load) stays inside its batch's range, which
  -- no other range of the map overlaps, so it costs one pass over its keys. Only ranges the
  -- envelope touches are matched key by key.
  q := format($q$
    WITH g AS (SELECT g.op_id, g.batch_no, g.new_shard, g.state, g.map_name, g.lo%2$s AS lo, g.hi%2$s AS hi FROM shardctl.ranges_in_force g
                WHERE g.map_id = $1 AND NOT shardctl.bypasses(g.range_id)),
         env AS (SELECT min(r) AS lo, max(r) AS hi FROM (SELECT %1$s AS r FROM (%3$s) s) s),
         near AS (SELECT g.* FROM g, env WHERE env.lo IS NOT NULL AND (g.lo IS NULL OR env.hi >= g.lo) AND (g.hi IS NULL OR env.lo < g.hi))
    SELECT near.op_id, near.batch_no, near.new_shard, near.state, near.map_name, x.v FROM near CROSS JOIN LATERAL (
      SELECT s.k::text AS v FROM (%3$s) s WHERE (near.lo IS NULL OR %1$s >= near.lo) AND (near.hi IS NULL OR %1$s < near.hi) LIMIT 1) x
    ORDER BY near.state <> 'fenced' DESC LIMIT 1$q$, route, bound, keys);
  EXECUTE q INTO hit USING map;
  IF hit.state = 'cutover' THEN
    PERFORM shardctl.await_cutover(hit.op_id, hit.batch_no);
    EXECUTE q INTO hit USING map;
  END IF;
  IF hit.v IS NULL THEN RETURN NULL; END IF;
  PERFORM shardctl.refuse_range(hit.state, map, hit.map_name, hit.op_id, hit.new_shard, hit.v, TG_TABLE_SCHEMA, TG_TABLE_NAME);
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION shardctl.guard_truncate() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  map bigint := TG_ARGV[0]::bigint;
  hit shardctl.guard_ranges;
  route text := current_setting('shardctl.route', true);
BEGIN
  IF route <> '' THEN
    PERFORM shardctl.check_route(map, route, NULL, TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  SELECT * INTO hit FROM shardctl.guard_ranges g WHERE g.map_id = map AND g.state <> 'fenced' LIMIT 1;
  IF hit.range_id IS NOT NULL THEN
    PERFORM shardctl.refuse('moving',
      format('TRUNCATE of %s.%s is refused: shardctl operation %s is moving rows of it to shard %s',
             TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.op_id, hit.new_shard),
      'wait for the operation (`shardctl op wait ' || hit.op_id || '`)', map, hit.map_name, hit.op_id, hit.new_shard, NULL, NULL,
      TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END
$fn$;

-- The light trigger's function (shardctl_guard_route, lib/migrate/guard.hpp): on the tables of
-- a map that has a route floor on this shard but no range, it replaces every trigger above, and
-- checks only a stated route against the floor (check_route: a malformed value refused, a stale
-- one refused with the DETAIL the heavy triggers give). Its trigger's WHEN already leaves out a
-- transaction that states no version; the test here is for a trigger made without it. A plain
-- table's trigger is BEFORE ... FOR EACH STATEMENT (no key named, as guard_rows); a partitioned
-- table's is FOR EACH ROW (cloned to every partition: a statement naming a partition fires no
-- statement trigger of its parent), naming the key, as guard() does there. Arguments: the map
-- id, the key column.
CREATE OR REPLACE FUNCTION shardctl.guard_route() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  route text := current_setting('shardctl.route', true);
BEGIN
  IF route IS NULL OR route = '' THEN RETURN coalesce(NEW, OLD); END IF;
  IF TG_LEVEL = 'ROW' THEN
    PERFORM shardctl.check_route(TG_ARGV[0]::bigint, route,
      CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) ELSE to_jsonb(OLD) END ->> TG_ARGV[1],
      TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
    RETURN coalesce(NEW, OLD);
  END IF;
  PERFORM shardctl.check_route(TG_ARGV[0]::bigint, route, NULL, TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  RETURN NULL;
END
$fn$;

-- Application roles call assert_route and nothing else of shardctl's here: the schema is
-- usable by PUBLIC for that, every other function revoked (a function is executable by PUBLIC
-- unless revoked; the triggers' functions run as their owner, whom this does not concern).
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA shardctl FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardctl.assert_route(text, bigint) TO PUBLIC;
GRANT USAGE ON SCHEMA shardctl TO PUBLIC;
