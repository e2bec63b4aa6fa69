#include "migrate/guard.hpp"

#include <chrono>
#include <thread>

#include "catalog/names.hpp"
#include "core/error.hpp"

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
    WHEN 'hash_text' THEN h := hashtextextended(v, 0);
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

CREATE OR REPLACE FUNCTION shardctl.guard_truncate() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  hit shardctl.guard_ranges;
BEGIN
  SELECT * INTO hit FROM shardctl.guard_ranges g WHERE g.map_id = TG_ARGV[0]::bigint AND g.state = 'offline' LIMIT 1;
  IF hit.range_id IS NOT NULL THEN
    RAISE EXCEPTION 'TRUNCATE of %.% is refused: shardctl operation % is moving rows of it to shard %',
      TG_TABLE_SCHEMA, TG_TABLE_NAME, hit.op_id, hit.new_shard
      USING ERRCODE = '55000', HINT = 'wait for the operation (`shardctl op wait ID`)';
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

bool has_guard_table(shardio::RawConn& shard) {
  return shard.query("SELECT to_regclass('shardctl.guard_ranges') IS NOT NULL")[0][0] == "t";
}

// Sessions holding a lock on one of the tables, for the message of a lock timeout.
std::string lock_holders(shardio::RawConn& shard, const std::vector<GuardedTable>& tables) {
  std::string regs;
  for (const auto& t : tables) regs += (regs.empty() ? "" : ", ") + shard.literal(t.quoted_table) + "::regclass";
  auto rows = shard.query(
      "SELECT DISTINCT a.pid::text, coalesce(a.usename, '?'), coalesce(nullif(a.application_name, ''), '-'), "
      "coalesce(a.state, '?'), coalesce(round(extract(epoch FROM now() - a.xact_start))::text, '?') "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.granted AND l.relation IN (" + regs + ") AND a.pid <> pg_backend_pid() ORDER BY 1 LIMIT 5");
  std::string out;
  for (const auto& r : rows)
    out += (out.empty() ? "" : "; ") + std::string("pid ") + r[0] + " (user " + r[1] + ", application " + r[2] + ", " +
           r[3] + ", transaction open " + r[4] + " s)";
  return out.empty() ? "a session that has since let go" : out;
}

// Runs `body` in a transaction with a short lock_timeout, retrying with backoff while a
// table lock is held by someone else: DDL queued behind a long transaction would otherwise
// queue every later reader and writer of the table behind itself.
template <class Body>
void with_lock_retries(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, Body body) {
  constexpr int attempts = 5;
  for (int attempt = 1;; ++attempt) {
    try {
      shard.exec("BEGIN");
      shard.exec("SET LOCAL lock_timeout = '1s'");
      shard.exec(guard_xact_lock);
      body();
      shard.exec("COMMIT");
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::locked) throw;
      shard.exec("ROLLBACK");
      if (attempt == attempts)
        throw locked_error("cannot change the write guard on " + shard.role() + ": a table lock was not granted in " +
                               std::to_string(attempts) + " tries; held by " + lock_holders(shard, tables),
                           "end that session's transaction, then `shardctl op resume ID`");
      std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
    }
  }
}

void install_triggers(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, std::int64_t map_id) {
  std::string map = std::to_string(map_id);
  for (const auto& t : tables) {
    auto present = shard.query(
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND tgenabled = 'A' AND "
        "((tgname = 'shardctl_guard' AND tgnargs = 3) OR tgname = 'shardctl_guard_truncate') AND tgparentid = 0",
        {t.quoted_table});
    if (present[0][0] == "2") continue;
    std::string args = shard.literal(map) + ", " + shard.literal(t.key_column) + ", " + shard.literal(how_of(space));
    shard.exec("DROP TRIGGER IF EXISTS shardctl_guard ON " + t.quoted_table);
    shard.exec("DROP TRIGGER IF EXISTS shardctl_guard_truncate ON " + t.quoted_table);
    shard.exec("CREATE TRIGGER shardctl_guard BEFORE INSERT OR UPDATE OR DELETE ON " + t.quoted_table +
               " FOR EACH ROW EXECUTE FUNCTION shardctl.guard(" + args + ")");
    shard.exec("ALTER TABLE " + t.quoted_table + " ENABLE ALWAYS TRIGGER shardctl_guard");
    shard.exec("CREATE TRIGGER shardctl_guard_truncate BEFORE TRUNCATE ON " + t.quoted_table +
               " FOR EACH STATEMENT EXECUTE FUNCTION shardctl.guard_truncate(" + shard.literal(map) + ")");
    shard.exec("ALTER TABLE " + t.quoted_table + " ENABLE ALWAYS TRIGGER shardctl_guard_truncate");
  }
}

std::optional<std::string> bound_text(const std::optional<routing::Key>& k) {
  if (!k) return std::nullopt;
  return routing::format_key(*k);
}

std::string literal_or_null(shardio::RawConn& shard, const std::optional<std::string>& v) { return v ? shard.literal(*v) : "NULL"; }

}  // namespace

void guard_batch(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, const GuardOwner& owner,
                 int batch_no, const routing::KeyRange& range) {
  with_lock_retries(shard, tables, [&] {
    bool ready = has_guard_table(shard) &&
                 shard.query("SELECT to_regprocedure('shardctl.guard_hit(bigint,text,text)') IS NOT NULL")[0][0] == "t";
    if (!ready) shard.exec(guard_sql);
    install_triggers(shard, space, tables, owner.map_id);
    shard.query("INSERT INTO shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard) "
                "SELECT $1, $2, $3, " + literal_or_null(shard, bound_text(range.low)) + ", " +
                    literal_or_null(shard, bound_text(range.high)) + ", 'offline', $4 "
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
                  "VALUES ($1, $2, $3, " + literal_or_null(shard, bound_text(lo)) + ", " +
                      literal_or_null(shard, bound_text(hi)) + ", 'fenced', $4, nullif($5, '')::timestamptz)",
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
        shard.exec("DROP TRIGGER IF EXISTS shardctl_guard ON " + t.quoted_table);
        shard.exec("DROP TRIGGER IF EXISTS shardctl_guard_truncate ON " + t.quoted_table);
      }
  });
  return left;
}

}  // namespace shardctl::migrate
