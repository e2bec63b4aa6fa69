#include "migrate/guard.hpp"

#include <chrono>
#include <thread>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "digest/sha256.hpp"

namespace shardctl::migrate {
namespace {

// Advisory lock (two-int4 form, shard side) that serializes guard changes on one shard.
constexpr const char* guard_xact_lock = "SELECT pg_advisory_xact_lock(1397244740, 2)";

// Bounds are kept as text and compared after a cast chosen by the trigger's `how` argument,
// so one function serves every key type and map kind. The functions are SECURITY DEFINER:
// the application's role needs no privilege on schema shardctl and cannot write to it, so
// the only bypass is the purge transaction whose xid the owning operation recorded.
// guard_hit is VOLATILE so that, under READ COMMITTED, every call sees ranges committed
// before it, not only those committed before the writer's statement began.
// guard_rows is the statement-level guard of plain tables: one AFTER trigger per event, each
// with its transition table (shardctl_old / shardctl_new), checks the statement's keys in one
// set-based query; an error there rolls the whole statement back, so nothing it wrote stays.
// It costs well under a microsecond a row where the row trigger guard() costs ~20 µs, which
// matters for shardctl's own bulk statements (the purge, and loads into a shard holding
// fences). guard() stays for partitioned tables: a row trigger is cloned to every partition,
// present or attached later, where statement triggers fire only on the table a statement names.
constexpr const char* guard_sql = R"SQL(
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.guard_ranges (
  range_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  op_id      uuid NOT NULL,
  map_id     bigint NOT NULL,
  batch_no   integer NOT NULL,
  lo         text,
  hi         text,
  state      text NOT NULL CHECK (state IN ('offline', 'fenced')),
  new_shard  text NOT NULL,
  purge_xid  xid8,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS guard_ranges_map ON shardctl.guard_ranges (map_id);
CREATE INDEX IF NOT EXISTS guard_ranges_op ON shardctl.guard_ranges (op_id, batch_no);
REVOKE ALL ON shardctl.guard_ranges FROM PUBLIC;
DROP TABLE IF EXISTS shardctl.offline_ranges;
DROP FUNCTION IF EXISTS shardctl.guard_blocks(text, text);

CREATE OR REPLACE FUNCTION shardctl.guard_hit(map bigint, v text, how text) RETURNS shardctl.guard_ranges
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  h bigint;
  r shardctl.guard_ranges;
  me xid8 := pg_current_xact_id_if_assigned();
BEGIN
  IF v IS NULL THEN RETURN r; END IF;
  IF how = 'text' THEN
    SELECT * INTO r FROM shardctl.guard_ranges g
     WHERE g.map_id = map AND (g.purge_xid IS NULL OR me IS NULL OR g.purge_xid <> me)
       AND (g.expires_at IS NULL OR g.expires_at > now())
       AND (g.lo IS NULL OR v COLLATE "C" >= g.lo COLLATE "C") AND (g.hi IS NULL OR v COLLATE "C" < g.hi COLLATE "C")
     ORDER BY g.state = 'offline' DESC LIMIT 1;
    RETURN r;
  ELSIF how = 'uuid' THEN
    SELECT * INTO r FROM shardctl.guard_ranges g
     WHERE g.map_id = map AND (g.purge_xid IS NULL OR me IS NULL OR g.purge_xid <> me)
       AND (g.expires_at IS NULL OR g.expires_at > now())
       AND (g.lo IS NULL OR v::uuid >= g.lo::uuid) AND (g.hi IS NULL OR v::uuid < g.hi::uuid)
     ORDER BY g.state = 'offline' DESC LIMIT 1;
    RETURN r;
  END IF;
  CASE how
    WHEN 'int' THEN h := v::bigint;
    WHEN 'hash_int' THEN h := hashint4extended(v::int4, 0);
    WHEN 'hash_bigint' THEN h := hashint8extended(v::int8, 0);
    WHEN 'hash_text' THEN h := hashtextextended(v COLLATE "C", 0);
    WHEN 'hash_uuid' THEN h := uuid_hash_extended(v::uuid, 0);
    ELSE RAISE EXCEPTION 'shardctl guard: unknown key kind %', how;
  END CASE;
  SELECT * INTO r FROM shardctl.guard_ranges g
   WHERE g.map_id = map AND (g.purge_xid IS NULL OR me IS NULL OR g.purge_xid <> me)
     AND (g.expires_at IS NULL OR g.expires_at > now())
     AND (g.lo IS NULL OR h >= g.lo::bigint) AND (g.hi IS NULL OR h < g.hi::bigint)
   ORDER BY g.state = 'offline' DESC LIMIT 1;
  RETURN r;
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
BEGIN
  FOREACH v IN ARRAY CASE WHEN new_key IS NOT DISTINCT FROM old_key THEN ARRAY[new_key] ELSE ARRAY[new_key, old_key] END LOOP
    hit := shardctl.guard_hit(map, v, how);
    IF hit.range_id IS NULL THEN CONTINUE; END IF;
    IF hit.state = 'offline' THEN
      RAISE EXCEPTION 'key % of %.% is being moved by shardctl operation % to shard %; writes to it are refused until its batch is done',
        v, TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.op_id, hit.new_shard
        USING ERRCODE = '55000', HINT = 'retry in a moment with a fresh shard map (`shardctl lookup`)';
    END IF;
    RAISE EXCEPTION 'key % of %.% has moved to shard % (shardctl operation %); this shard no longer accepts writes to it',
      v, TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.new_shard, hit.op_id
      USING ERRCODE = '55000', HINT = 'reload the shard map and write to shard ' || hit.new_shard;
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
  me xid8 := pg_current_xact_id_if_assigned();
  route text;
  bound text;
  keys text;
  hit record;
BEGIN
  -- Most statements run while the map has no range this transaction is not exempt from.
  PERFORM FROM shardctl.guard_ranges g
   WHERE g.map_id = map AND (g.purge_xid IS NULL OR me IS NULL OR g.purge_xid <> me)
     AND (g.expires_at IS NULL OR g.expires_at > now()) LIMIT 1;
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
  EXECUTE format($q$
    WITH g AS (SELECT g.op_id, g.new_shard, g.state, g.lo%2$s AS lo, g.hi%2$s AS hi FROM shardctl.guard_ranges g
                WHERE g.map_id = $1 AND (g.purge_xid IS NULL OR $2 IS NULL OR g.purge_xid <> $2)
                  AND (g.expires_at IS NULL OR g.expires_at > now())),
         env AS (SELECT min(r) AS lo, max(r) AS hi FROM (SELECT %1$s AS r FROM (%3$s) s) s),
         near AS (SELECT g.* FROM g, env WHERE env.lo IS NOT NULL AND (g.lo IS NULL OR env.hi >= g.lo) AND (g.hi IS NULL OR env.lo < g.hi))
    SELECT near.op_id, near.new_shard, near.state, x.v FROM near CROSS JOIN LATERAL (
      SELECT s.k::text AS v FROM (%3$s) s WHERE (near.lo IS NULL OR %1$s >= near.lo) AND (near.hi IS NULL OR %1$s < near.hi) LIMIT 1) x
    ORDER BY near.state = 'offline' DESC LIMIT 1$q$, route, bound, keys) INTO hit USING map, me;
  IF hit.v IS NULL THEN RETURN NULL; END IF;
  IF hit.state = 'offline' THEN
    RAISE EXCEPTION 'key % of %.% is being moved by shardctl operation % to shard %; writes to it are refused until its batch is done',
      hit.v, TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.op_id, hit.new_shard
      USING ERRCODE = '55000', HINT = 'retry in a moment with a fresh shard map (`shardctl lookup`)';
  END IF;
  RAISE EXCEPTION 'key % of %.% has moved to shard % (shardctl operation %); this shard no longer accepts writes to it',
    hit.v, TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.new_shard, hit.op_id
    USING ERRCODE = '55000', HINT = 'reload the shard map and write to shard ' || hit.new_shard;
END
$fn$;

CREATE OR REPLACE FUNCTION shardctl.guard_truncate() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  hit shardctl.guard_ranges;
BEGIN
  SELECT * INTO hit FROM shardctl.guard_ranges g WHERE g.map_id = TG_ARGV[0]::bigint AND g.state = 'offline' LIMIT 1;
  IF hit.range_id IS NOT NULL THEN
    RAISE EXCEPTION 'TRUNCATE of %.% is refused: shardctl operation % is moving rows of it to shard %',
      TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.op_id, hit.new_shard
      USING ERRCODE = '55000', HINT = 'wait for the operation (`shardctl op wait ' || hit.op_id || '`)';
  END IF;
  RETURN NULL;
END
$fn$;
)SQL";

std::string how_of(const shardio::RouteSpace& space) {
  std::string type(routing::key_type_name(space.key_type));
  if (space.kind == routing::MapKind::hash) return "hash_" + type;
  if (space.key_type == routing::KeyType::int4 || space.key_type == routing::KeyType::int8) return "int";
  return type;
}

// The guard functions' version on a shard: a hash of guard_sql, kept as the comment of
// shardctl.guard_hit. A shard whose functions came from another shardctl (older, or newer and
// then downgraded) gets this one's at its next guard_batch, so a fixed guard reaches shards
// that already had one; the functions are replaced in place (CREATE OR REPLACE), triggers kept.
const std::string& guard_version() {
  static const std::string version = [] {
    digest::Sha256 h;
    h.update(guard_sql);
    return "shardctl guard " + h.hex_digest().substr(0, 16);
  }();
  return version;
}

bool has_guard_table(shardio::RawConn& shard) {
  return shard.query("SELECT to_regclass('shardctl.guard_ranges') IS NOT NULL")[0][0] == "t";
}

// Sessions holding a lock on one of the tables, for the message of a lock timeout, and whether
// one of them is an autovacuum worker.
struct LockHolders {
  std::string text;
  bool autovacuum = false;
};

LockHolders lock_holders(shardio::RawConn& shard, const std::vector<GuardedTable>& tables) {
  std::string regs;
  for (const auto& t : tables) regs += (regs.empty() ? "" : ", ") + shard.literal(t.quoted_table) + "::regclass";
  auto rows = shard.query(
      "SELECT DISTINCT a.pid::text, coalesce(a.usename, '?'), coalesce(nullif(a.application_name, ''), '-'), "
      "coalesce(a.state, '?'), coalesce(round(extract(epoch FROM now() - a.xact_start))::text, '?'), "
      "a.backend_type = 'autovacuum worker', coalesce(a.query, '') "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.granted AND l.relation IN (" + regs + ") AND a.pid <> pg_backend_pid() "
      // Relation OIDs repeat across the databases of a cluster: this database's locks only.
      "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY 1 LIMIT 5");
  LockHolders out;
  for (const auto& r : rows) {
    bool autovacuum = r[5] == "t";
    out.autovacuum = out.autovacuum || autovacuum;
    out.text += (out.text.empty() ? "" : "; ") + std::string("pid ") + r[0] +
                (autovacuum ? " (" + r[6] + ", running " + r[4] + " s)"
                            : " (user " + r[1] + ", application " + r[2] + ", " + r[3] + ", transaction open " + r[4] + " s)");
  }
  if (out.text.empty()) out.text = "a session that has since let go";
  return out;
}

// Runs `body` in a transaction with a short lock_timeout, retrying with backoff while a
// table lock is held by someone else: DDL queued behind a long transaction would otherwise
// queue every later reader and writer of the table behind itself.
// An autovacuum worker (busy right after a big purge) gives way to a lock request that has
// waited deadlock_timeout: PostgreSQL cancels it, as it does for any DDL. A 1 s lock_timeout
// gives up before that (deadlock_timeout is 1 s by default), so once autovacuum is seen
// holding a lock the next try waits deadlock_timeout and a second longer.
template <class Body>
void with_lock_retries(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, Body body) {
  constexpr int attempts = 5;
  std::string timeout = "1s";
  for (int attempt = 1;; ++attempt) {
    try {
      shard.exec("BEGIN");
      shard.exec("SET LOCAL lock_timeout = " + shard.literal(timeout));
      shard.exec(guard_xact_lock);
      body();
      shard.exec("COMMIT");
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::locked) throw;
      shard.exec("ROLLBACK");
      auto holders = lock_holders(shard, tables);
      if (attempt == attempts)
        throw locked_error("cannot change the write guard on " + shard.role() + ": a table lock was not granted in " +
                               std::to_string(attempts) + " tries; held by " + holders.text,
                           holders.autovacuum ? "an autovacuum that prevents wraparound does not give way; wait for it "
                                                "to finish, then `shardctl op resume ID`"
                                              : "end that session's transaction, then `shardctl op resume ID`");
      if (holders.autovacuum)
        timeout = shard.query("SELECT round(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000 + 1000)::text || 'ms'")[0][0];
      std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
    }
  }
}

// Every trigger name the guard uses, this version's and earlier ones' (an upgrade replaces
// a plain table's row trigger shardctl_guard with the statement triggers).
constexpr const char* guard_trigger_names[] = {"shardctl_guard", "shardctl_guard_insert", "shardctl_guard_update",
                                               "shardctl_guard_delete", "shardctl_guard_truncate"};

void drop_triggers(shardio::RawConn& shard, const std::string& quoted_table) {
  for (const char* name : guard_trigger_names) shard.exec(std::string("DROP TRIGGER IF EXISTS ") + name + " ON " + quoted_table);
}

// CREATE TRIGGER name WHEN ON table tail, then ENABLE ALWAYS: it fires under
// session_replication_role = replica too.
void create_trigger(shardio::RawConn& shard, const std::string& quoted_table, const char* name, const char* when,
                    const std::string& tail) {
  std::string sql = "CREATE TRIGGER ";
  sql += name;
  sql += ' ';
  sql += when;
  sql += " ON ";
  sql += quoted_table;
  sql += ' ';
  sql += tail;
  shard.exec(sql);
  sql = "ALTER TABLE ";
  sql += quoted_table;
  sql += " ENABLE ALWAYS TRIGGER ";
  sql += name;
  shard.exec(sql);
}

// A partitioned table keeps the row trigger alone (cloned to each partition); a plain table
// gets one statement trigger per event, and the row trigger with its WHEN (guard.hpp). Both
// get the TRUNCATE trigger. Tables whose triggers are already this version's, enabled ALWAYS,
// are left alone.
void install_triggers(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, std::int64_t map_id) {
  std::string map = shard.literal(std::to_string(map_id));
  for (const auto& t : tables) {
    auto r = shard.query(
        "SELECT c.relkind = 'p', coalesce((SELECT string_agg(tgname || CASE WHEN tgqual IS NULL THEN '' ELSE '?' END, ',' "
        "ORDER BY tgname) FROM pg_trigger "
        "WHERE tgrelid = c.oid AND tgparentid = 0 AND tgname LIKE 'shardctl\\_guard%' AND tgenabled = 'A' "
        "AND tgnargs = CASE WHEN tgname = 'shardctl_guard_truncate' THEN 1 ELSE 3 END), '') "
        "FROM pg_class c WHERE c.oid = $1::regclass",
        {t.quoted_table});
    bool partitioned = r[0][0] == "t";
    const char* want = partitioned ? "shardctl_guard,shardctl_guard_truncate"
                                   : "shardctl_guard?,shardctl_guard_delete,shardctl_guard_insert,shardctl_guard_truncate,"
                                     "shardctl_guard_update";
    if (r[0][1] == want) continue;
    std::string args = map;
    args += ", ";
    args += shard.literal(t.key_column);
    args += ", ";
    args += shard.literal(how_of(space));
    args += ')';
    drop_triggers(shard, t.quoted_table);
    std::string row = "FOR EACH ROW ";
    if (!partitioned) row += "WHEN (current_setting('shardctl.row_guard', true) IS DISTINCT FROM 'off') ";
    row += "EXECUTE FUNCTION shardctl.guard(";
    row += args;
    create_trigger(shard, t.quoted_table, "shardctl_guard", "BEFORE INSERT OR UPDATE OR DELETE", row);
    if (!partitioned) {
      std::string fn = "FOR EACH STATEMENT EXECUTE FUNCTION shardctl.guard_rows(" + args;
      create_trigger(shard, t.quoted_table, "shardctl_guard_insert", "AFTER INSERT", "REFERENCING NEW TABLE AS shardctl_new " + fn);
      create_trigger(shard, t.quoted_table, "shardctl_guard_update", "AFTER UPDATE",
                     "REFERENCING OLD TABLE AS shardctl_old NEW TABLE AS shardctl_new " + fn);
      create_trigger(shard, t.quoted_table, "shardctl_guard_delete", "AFTER DELETE", "REFERENCING OLD TABLE AS shardctl_old " + fn);
    }
    std::string truncate_args = "FOR EACH STATEMENT EXECUTE FUNCTION shardctl.guard_truncate(" + map;
    truncate_args += ')';
    create_trigger(shard, t.quoted_table, "shardctl_guard_truncate", "BEFORE TRUNCATE", truncate_args);
  }
}

std::string literal_or_null(shardio::RawConn& shard, const std::optional<std::string>& v) { return v ? shard.literal(*v) : "NULL"; }

}  // namespace

void guard_batch(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, const GuardOwner& owner,
                 int batch_no, const routing::KeyRange& range) {
  with_lock_retries(shard, tables, [&] {
    bool ready = has_guard_table(shard) &&
                 shard.query("SELECT to_regprocedure('shardctl.guard_rows()') IS NOT NULL AND "
                             "obj_description(to_regprocedure('shardctl.guard_hit(bigint,text,text)'), 'pg_proc') "
                             "IS NOT DISTINCT FROM $1",
                             {guard_version()})[0][0] == "t";
    if (!ready) {
      shard.exec(guard_sql);
      shard.exec("COMMENT ON FUNCTION shardctl.guard_hit(bigint, text, text) IS " + shard.literal(guard_version()));
    }
    install_triggers(shard, space, tables, owner.map_id);
    shard.query("INSERT INTO shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard) "
                "SELECT $1, $2, $3, " + literal_or_null(shard, routing::format_bound(range.low)) + ", " +
                    literal_or_null(shard, routing::format_bound(range.high)) + ", 'offline', $4 "
                "WHERE NOT EXISTS (SELECT 1 FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $3)",
                {owner.op_id, std::to_string(owner.map_id), std::to_string(batch_no), owner.new_shard});
  });
}

void wait_for_older_transactions(shardio::RawConn& shard, int seconds) {
  std::string since = shard.query("SELECT clock_timestamp()::text")[0][0];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (int sleep_ms = 10;; sleep_ms = std::min(sleep_ms * 2, 500)) {
    auto older = shard.query(
        "SELECT pid::text, coalesce(usename, '?'), coalesce(nullif(application_name, ''), '-'), coalesce(state, '?') "
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND backend_type = 'client backend' AND xact_start < $1::timestamptz ORDER BY xact_start LIMIT 5",
        {since});
    if (older.empty()) return;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string who;
      for (const auto& r : older)
        who += (who.empty() ? "" : "; ") + std::string("pid ") + r[0] + " (user " + r[1] + ", application " + r[2] + ", " +
               r[3] + ")";
      throw locked_error("transactions that began before the write guard on " + shard.role() + " are still open after " +
                             std::to_string(seconds) + " s: " + who,
                         "they could write rows the copy would miss; end them, then `shardctl op resume ID` "
                         "(or `shardctl op cancel ID`)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  }
}

std::string batch_guard_state(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  if (!has_guard_table(shard)) return "";
  auto r = shard.query("SELECT state FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $2 "
                       "ORDER BY state = 'offline' DESC LIMIT 1",
                       {op_id, std::to_string(batch_no)});
  return r.empty() ? "" : r[0][0];
}

void bypass_batch_guard(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  shard.query("UPDATE shardctl.guard_ranges SET purge_xid = pg_current_xact_id() WHERE op_id = $1 AND batch_no = $2 "
              "AND state = 'offline'",
              {op_id, std::to_string(batch_no)});
}

void fence_batch(shardio::RawConn& shard, const std::string& op_id, int batch_no, const std::optional<std::string>& grace) {
  // No grace: a fence that never expires (NULL), until `shardctl op unfence` lifts it.
  shard.query("UPDATE shardctl.guard_ranges SET state = 'fenced', purge_xid = NULL, "
              "expires_at = now() + nullif($3, '')::interval WHERE op_id = $1 AND batch_no = $2 AND state = 'offline'",
              {op_id, std::to_string(batch_no), grace.value_or("")});
}

void lift_fences_in(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type, const routing::KeyRange& range) {
  if (!has_guard_table(shard)) return;
  shard.exec(guard_xact_lock);
  auto rows = shard.query("SELECT range_id::text, op_id::text, batch_no::text, lo IS NULL, coalesce(lo, ''), hi IS NULL, "
                          "coalesce(hi, ''), new_shard, coalesce(expires_at::text, '') FROM shardctl.guard_ranges "
                          "WHERE map_id = $1 AND state = 'fenced' FOR UPDATE",
                          {std::to_string(map_id)});
  for (const auto& r : rows) {
    routing::KeyRange fence;
    if (r[3] != "t") fence.low = routing::parse_key(bound_type, r[4]);
    if (r[5] != "t") fence.high = routing::parse_key(bound_type, r[6]);
    if (!routing::ranges_overlap(fence, range)) continue;
    shard.query("DELETE FROM shardctl.guard_ranges WHERE range_id = $1", {r[0]});
    // What is left of the fence on either side of the range keeps refusing writes.
    auto keep = [&](const std::optional<routing::Key>& lo, const std::optional<routing::Key>& hi) {
      shard.query("INSERT INTO shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard, expires_at) "
                  "VALUES ($1, $2, $3, " + literal_or_null(shard, routing::format_bound(lo)) + ", " +
                      literal_or_null(shard, routing::format_bound(hi)) + ", 'fenced', $4, nullif($5, '')::timestamptz)",
                  {r[1], std::to_string(map_id), r[2], r[7], r[8]});
    };
    if (range.low && (!fence.low || routing::compare_keys(*fence.low, *range.low) < 0)) keep(fence.low, range.low);
    if (range.high && (!fence.high || routing::compare_keys(*range.high, *fence.high) < 0)) keep(range.high, fence.high);
  }
}

int release_guard(shardio::RawConn& shard, const std::string& op_id, std::int64_t map_id, const std::vector<GuardedTable>& tables,
                  bool fences) {
  if (!has_guard_table(shard)) return 0;
  int left = 0;
  with_lock_retries(shard, tables, [&] {
    shard.query(std::string("DELETE FROM shardctl.guard_ranges WHERE op_id = $1") + (fences ? "" : " AND state = 'offline'"),
                {op_id});
    left = std::stoi(shard.query("SELECT count(*) FROM shardctl.guard_ranges WHERE op_id = $1", {op_id})[0][0]);
    bool map_has_ranges =
        shard.query("SELECT EXISTS (SELECT 1 FROM shardctl.guard_ranges WHERE map_id = $1)", {std::to_string(map_id)})[0][0] ==
        "t";
    if (!map_has_ranges)
      for (const auto& t : tables) {
        if (shard.query("SELECT to_regclass($1) IS NOT NULL", {t.quoted_table})[0][0] != "t") continue;
        drop_triggers(shard, t.quoted_table);
      }
  });
  return left;
}

}  // namespace shardctl::migrate
