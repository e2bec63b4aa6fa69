#include "shardside/guard.hpp"

#include <algorithm>

#include "core/error.hpp"

#include "digest/sha256.hpp"
#include "shardside/names.hpp"
#include "shardside/sql.hpp"

namespace shardctl::shardside {
namespace {

std::string literal_or_null(shardio::RawConn& shard, const std::optional<std::string>& v) { return v ? shard.literal(*v) : "NULL"; }

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

// The columns read_range reads, in its order.
constexpr const char* range_columns =
    "range_id::text, op_id::text, map_id::text, batch_no::text, lo IS NULL, coalesce(lo, ''), hi IS NULL, coalesce(hi, ''), "
    "state, new_shard, expires_at IS NULL, coalesce(expires_at::text, ''), coalesce(expires_at < now(), false), "
    // Through the row's JSON: a guard table of an earlier version has no map_name (`check`
    // reads shards whose guard no move of this version has installed yet).
    "to_jsonb(g) ->> 'map_name' IS NULL, coalesce(to_jsonb(g) ->> 'map_name', '') "
    "FROM shardctl.guard_ranges g ";

GuardRange read_range(const std::vector<std::string>& r) {
  GuardRange g;
  g.range_id = std::stoll(r[0]);
  g.op_id = r[1];
  g.map_id = std::stoll(r[2]);
  g.batch_no = std::stoi(r[3]);
  if (r[4] != "t") g.lo = r[5];
  if (r[6] != "t") g.hi = r[7];
  g.state = guard_state_words.read(r[8], "guard range state", "shardctl.guard_ranges");
  g.new_shard = r[9];
  if (r[10] != "t") g.expires_at = r[11];
  g.expired = r[12] == "t";
  if (r[13] != "t") g.map_name = r[14];
  return g;
}

constexpr const char* floor_columns =
    "map_id::text, map_name, min_version::text, op_id IS NULL, coalesce(op_id::text, ''), new_shard IS NULL, "
    "coalesce(new_shard, '') FROM shardctl.route_floors ";

RouteFloor read_floor(const std::vector<std::string>& r) {
  RouteFloor f;
  f.map_id = std::stoll(r[0]);
  f.map_name = r[1];
  f.min_version = std::stoll(r[2]);
  if (r[3] != "t") f.op_id = r[4];
  if (r[5] != "t") f.new_shard = r[6];
  return f;
}

bool has_route_floors_table(shardio::RawConn& shard) {
  return shard.query("SELECT to_regclass('shardctl.route_floors') IS NOT NULL")[0][0] == "t";
}

// The bigint advisory lock of lock_route_floor: its own text, so it meets no other lock of
// shardctl's (cutover_lock hashes 'shardctl cutover ...').
std::string floor_lock_key(std::int64_t map_id) { return "shardctl route floor " + std::to_string(map_id); }

}  // namespace

const std::string& guard_version() {
  static const std::string version = [] {
    digest::Sha256 h;
    h.update(sql::guard);
    return "shardctl guard " + h.hex_digest().substr(0, 16);
  }();
  return version;
}

std::string guard_key_kind(const shardio::RouteSpace& space) {
  std::string type(to_text(space.key_type));
  if (space.kind == routing::MapKind::hash) return "hash_" + type;
  if (space.key_type == routing::KeyType::int4 || space.key_type == routing::KeyType::int8) return "int";
  return type;
}

void lock_guard_changes(shardio::RawConn& shard) {
  // Two-int4 form, shard side; no other advisory lock of shardctl on shards uses (1397244740, 2).
  shard.exec("SELECT pg_advisory_xact_lock(1397244740, 2)");
}

bool has_guard_table(shardio::RawConn& shard) {
  return shard.query("SELECT to_regclass('shardctl.guard_ranges') IS NOT NULL")[0][0] == "t";
}

bool guard_is_current(shardio::RawConn& shard) {
  return has_guard_table(shard) &&
         shard.query("SELECT to_regprocedure('shardctl.guard_rows()') IS NOT NULL AND "
                     "obj_description(to_regprocedure('shardctl.guard_hit(bigint,text,text)'), 'pg_proc') "
                     "IS NOT DISTINCT FROM $1",
                     {guard_version()})[0][0] == "t";
}

void ensure_guard(shardio::RawConn& shard) {
  if (guard_is_current(shard)) return;
  shard.script(std::string(sql::guard));
  shard.exec(std::string("COMMENT ON FUNCTION ") + guard_hit_signature + " IS " + shard.literal(guard_version()));
}

void install_guard_triggers(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, std::int64_t map_id,
                            const std::string& how) {
  std::string map = shard.literal(std::to_string(map_id));
  for (const auto& t : tables) {
    auto r = shard.query(
        "SELECT c.relkind = 'p', coalesce((SELECT string_agg(tgname || CASE WHEN tgqual IS NULL THEN '' ELSE '?' END || '/' || tgtype, ',' "
        "ORDER BY tgname) FROM pg_trigger "
        "WHERE tgrelid = c.oid AND tgparentid = 0 AND tgname LIKE 'shardctl\\_guard%' AND (tgname = 'shardctl_guard_route' "
        "OR tgenabled = 'A' AND tgnargs = CASE WHEN tgname = 'shardctl_guard_truncate' THEN 1 WHEN c.relkind = 'p' AND tgname = 'shardctl_guard' "
        "THEN 4 ELSE 3 END)), '') "
        "FROM pg_class c WHERE c.oid = $1::regclass",
        {t.quoted_table});
    bool partitioned = r[0][0] == "t";
    // Each trigger as name, '?' when it has a WHEN, '/' and its pg_trigger.tgtype (an earlier
    // version's row trigger of a plain table also fired on DELETE: 31; this version's, 23). The light
    // trigger (install_route_triggers), in any form, is never wanted here: it is dropped.
    const char* want = partitioned ? "shardctl_guard/31,shardctl_guard_truncate/34"
                                   : "shardctl_guard?/23,shardctl_guard_delete/8,shardctl_guard_insert/4,"
                                     "shardctl_guard_truncate/34,shardctl_guard_update/16";
    if (r[0][1] == want) continue;
    std::string args = map;
    args += ", ";
    args += shard.literal(t.key_column);
    args += ", ";
    args += shard.literal(how);
    args += ')';
    drop_guard_triggers(shard, t.quoted_table);
    std::string row = "FOR EACH ROW ";
    if (!partitioned) row += std::string("WHEN (current_setting('") + row_guard_setting + "', true) IS DISTINCT FROM 'off') ";
    row += std::string("EXECUTE FUNCTION ") + guard_row_function + "(";
    // A fourth argument tells guard() that no statement trigger checks the stale route: it
    // checks it for every row of a partitioned table (sql/guard.sql), on a plain table only
    // before it refuses a key (the statement trigger checks each statement).
    row += partitioned ? args.substr(0, args.size() - 1) + ", 'each_row')" : args;
    // Not on DELETE for a plain table: a BEFORE ROW DELETE trigger makes PostgreSQL lock every
    // row before deleting it, whether or not the trigger's WHEN lets it fire, and that was a
    // third of the purge's DELETE on a scattered heap (bench/README.md, "moves on a scattered heap"). The
    // statement trigger guards deletes.
    create_trigger(shard, t.quoted_table, guard_row_trigger,
                   partitioned ? "BEFORE INSERT OR UPDATE OR DELETE" : "BEFORE INSERT OR UPDATE", row);
    if (!partitioned) {
      std::string fn = std::string("FOR EACH STATEMENT EXECUTE FUNCTION ") + guard_rows_function + "(" + args;
      std::string old_rows = std::string("OLD TABLE AS ") + guard_old_rows + " ";
      std::string new_rows = std::string("NEW TABLE AS ") + guard_new_rows + " ";
      create_trigger(shard, t.quoted_table, guard_insert_trigger, "AFTER INSERT", "REFERENCING " + new_rows + fn);
      create_trigger(shard, t.quoted_table, guard_update_trigger, "AFTER UPDATE", "REFERENCING " + old_rows + new_rows + fn);
      create_trigger(shard, t.quoted_table, guard_delete_trigger, "AFTER DELETE", "REFERENCING " + old_rows + fn);
    }
    std::string truncate_args = std::string("FOR EACH STATEMENT EXECUTE FUNCTION ") + guard_truncate_function + "(" + map;
    truncate_args += ')';
    create_trigger(shard, t.quoted_table, guard_truncate_trigger, "BEFORE TRUNCATE", truncate_args);
  }
}

void install_route_triggers(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, std::int64_t map_id) {
  std::string map = shard.literal(std::to_string(map_id));
  // The trigger's WHEN: no call at all for a transaction that states no version (NULL <> ''
  // is NULL). On a statement trigger too: its WHEN may not read columns, a setting it may.
  std::string when = std::string("WHEN (current_setting(") + shard.literal(route_setting) + ", true) <> '') ";
  for (const auto& t : tables) {
    auto r = shard.query(
        // Every guard trigger of the table, each as name, '?' when it has a WHEN, '/' and its
        // tgtype, '!' when it is not ENABLE ALWAYS with two arguments.
        "SELECT c.relkind = 'p', coalesce((SELECT string_agg(tgname || CASE WHEN tgqual IS NULL THEN '' ELSE '?' END || '/' || tgtype "
        "|| CASE WHEN tgenabled = 'A' AND tgnargs = 2 THEN '' ELSE '!' END, ',' ORDER BY tgname) FROM pg_trigger "
        "WHERE tgrelid = c.oid AND tgparentid = 0 AND tgname LIKE 'shardctl\\_guard%'), '') "
        "FROM pg_class c WHERE c.oid = $1::regclass",
        {t.quoted_table});
    bool partitioned = r[0][0] == "t";
    // tgtype: BEFORE (2) INSERT (4) DELETE (8) UPDATE (16), and ROW (1) on a partitioned table.
    if (r[0][1] == (partitioned ? "shardctl_guard_route?/31" : "shardctl_guard_route?/30")) continue;
    drop_guard_triggers(shard, t.quoted_table);
    std::string tail = partitioned ? "FOR EACH ROW " : "FOR EACH STATEMENT ";
    tail += when;
    tail += std::string("EXECUTE FUNCTION ") + guard_route_function + "(" + map + ", " + shard.literal(t.key_column) + ")";
    create_trigger(shard, t.quoted_table, guard_route_trigger, "BEFORE INSERT OR UPDATE OR DELETE", tail);
  }
}

void drop_guard_triggers(shardio::RawConn& shard, const std::string& quoted_table) {
  for (const char* name : guard_triggers) shard.exec(std::string("DROP TRIGGER IF EXISTS ") + name + " ON " + quoted_table);
}

std::vector<GuardRange> guard_ranges(shardio::RawConn& shard) {
  if (!has_guard_table(shard)) return {};
  std::vector<GuardRange> out;
  for (const auto& r : shard.query(std::string("SELECT ") + range_columns + "ORDER BY op_id, batch_no, range_id"))
    out.push_back(read_range(r));
  return out;
}

std::vector<GuardRange> lock_fences_of_map(shardio::RawConn& shard, std::int64_t map_id) {
  std::vector<GuardRange> out;
  for (const auto& r : shard.query(std::string("SELECT ") + range_columns + "WHERE map_id = $1 AND state = 'fenced' FOR UPDATE",
                                   {std::to_string(map_id)}))
    out.push_back(read_range(r));
  return out;
}

std::optional<GuardState> batch_guard_state(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  if (!has_guard_table(shard)) return std::nullopt;
  auto r = shard.query("SELECT state FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $2 "
                       "ORDER BY state <> 'fenced' DESC LIMIT 1",
                       {op_id, std::to_string(batch_no)});
  if (r.empty()) return std::nullopt;
  return guard_state_words.read(r[0][0], "guard range state", "shardctl.guard_ranges");
}

void add_batch_range(shardio::RawConn& shard, GuardState state, const std::string& op_id, std::int64_t map_id,
                     const std::string& map_name, int batch_no, const std::optional<std::string>& lo,
                     const std::optional<std::string>& hi, const std::string& new_shard) {
  shard.query("INSERT INTO shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard, map_name) "
              "SELECT $1, $2, $3, " + literal_or_null(shard, lo) + ", " + literal_or_null(shard, hi) + ", $5, $4, $6 "
              "WHERE NOT EXISTS (SELECT 1 FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $3)",
              {op_id, std::to_string(map_id), std::to_string(batch_no), new_shard, std::string(guard_state_words.text(state)),
               map_name});
}

bool lock_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no, int wait_ms) {
  // A session lock taken outside any transaction, so lock_timeout is set around it.
  shard.exec("SET lock_timeout = " + std::to_string(std::max(wait_ms, 1)));
  bool got = true;
  try {
    shard.query("SELECT pg_advisory_lock(shardctl.cutover_lock($1, $2))", {op_id, std::to_string(batch_no)});
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::locked) {
      // The session may serve on (a caller that handles the error): not with this timeout.
      try {
        shard.exec("RESET lock_timeout");
      } catch (const Error&) {  // a lost session keeps nothing; the first error says why
      }
      throw;
    }
    got = false;
  }
  shard.exec("RESET lock_timeout");
  return got;
}

void unlock_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  shard.query("SELECT pg_advisory_unlock(shardctl.cutover_lock($1, $2))", {op_id, std::to_string(batch_no)});
}

bool end_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no, bool moved) {
  auto sql = moved ? std::string("UPDATE shardctl.guard_ranges SET state = 'offline' ")
                   : std::string("DELETE FROM shardctl.guard_ranges ");
  return !shard.query(sql + "WHERE op_id = $1 AND batch_no = $2 AND state = 'cutover' RETURNING 1",
                      {op_id, std::to_string(batch_no)}).empty();
}

void add_fence(shardio::RawConn& shard, const GuardRange& fence) {
  shard.query("INSERT INTO shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard, expires_at, map_name) "
              "VALUES ($1, $2, $3, " + literal_or_null(shard, fence.lo) + ", " + literal_or_null(shard, fence.hi) +
                  ", 'fenced', $4, nullif($5, '')::timestamptz, " + literal_or_null(shard, fence.map_name) + ")",
              {fence.op_id, std::to_string(fence.map_id), std::to_string(fence.batch_no), fence.new_shard,
               fence.expires_at.value_or("")});
}

void delete_guard_range(shardio::RawConn& shard, std::int64_t range_id) {
  shard.query("DELETE FROM shardctl.guard_ranges WHERE range_id = $1", {std::to_string(range_id)});
}

void bypass_range(shardio::RawConn& shard, std::int64_t range_id) {
  shard.query("UPDATE shardctl.guard_ranges SET purge_xid = pg_current_xact_id() WHERE range_id = $1", {std::to_string(range_id)});
}

void bypass_batch_guard(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  shard.query("UPDATE shardctl.guard_ranges SET purge_xid = pg_current_xact_id() WHERE op_id = $1 AND batch_no = $2 "
              "AND state = 'offline'",
              {op_id, std::to_string(batch_no)});
}

void add_batch_bypass(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  shard.query("INSERT INTO shardctl.guard_bypass (range_id, xid) SELECT range_id, pg_current_xact_id() "
              "FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $2 AND state = 'offline' ON CONFLICT DO NOTHING",
              {op_id, std::to_string(batch_no)});
}

void fence_batch(shardio::RawConn& shard, const std::string& op_id, int batch_no, const std::optional<std::string>& grace) {
  // No grace: a fence that never expires (NULL), until `shardctl op unfence` lifts it.
  shard.query("UPDATE shardctl.guard_ranges SET state = 'fenced', purge_xid = NULL, "
              "expires_at = now() + nullif($3, '')::interval WHERE op_id = $1 AND batch_no = $2 AND state = 'offline'",
              {op_id, std::to_string(batch_no), grace.value_or("")});
}

void delete_batch_range(shardio::RawConn& shard, const std::string& op_id, int batch_no) {
  shard.query("DELETE FROM shardctl.guard_ranges WHERE op_id = $1 AND batch_no = $2 AND state <> 'fenced'",
              {op_id, std::to_string(batch_no)});
}

void delete_op_ranges(shardio::RawConn& shard, const std::string& op_id, bool fences) {
  shard.query(std::string("DELETE FROM shardctl.guard_ranges WHERE op_id = $1") + (fences ? "" : " AND state <> 'fenced'"),
              {op_id});
}

int op_range_count(shardio::RawConn& shard, const std::string& op_id) {
  return std::stoi(shard.query("SELECT count(*) FROM shardctl.guard_ranges WHERE op_id = $1", {op_id})[0][0]);
}

int op_fence_count(shardio::RawConn& shard, const std::string& op_id) {
  return std::stoi(
      shard.query("SELECT count(*) FROM shardctl.guard_ranges WHERE op_id = $1 AND state = 'fenced'", {op_id})[0][0]);
}

bool map_has_ranges(shardio::RawConn& shard, std::int64_t map_id) {
  return shard.query("SELECT EXISTS (SELECT 1 FROM shardctl.guard_ranges WHERE map_id = $1)", {std::to_string(map_id)})[0][0] ==
         "t";
}

void raise_route_floor(shardio::RawConn& shard, std::int64_t map_id, const std::string& map_name, std::int64_t version,
                       const std::string& op_id, const std::string& new_shard) {
  // The raise that sets a higher floor names itself; an equal or lower one changes nothing.
  shard.query("INSERT INTO shardctl.route_floors AS f (map_id, map_name, min_version, op_id, new_shard, raised_at) "
              "VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (map_id) DO UPDATE SET map_name = excluded.map_name, "
              "min_version = greatest(f.min_version, excluded.min_version), "
              "op_id = CASE WHEN excluded.min_version > f.min_version THEN excluded.op_id ELSE f.op_id END, "
              "new_shard = CASE WHEN excluded.min_version > f.min_version THEN excluded.new_shard ELSE f.new_shard END, "
              "raised_at = CASE WHEN excluded.min_version > f.min_version THEN excluded.raised_at ELSE f.raised_at END",
              {std::to_string(map_id), map_name, std::to_string(version), op_id, new_shard});
}

std::optional<RouteFloor> route_floor(shardio::RawConn& shard, std::int64_t map_id) {
  if (!has_route_floors_table(shard)) return std::nullopt;
  auto r = shard.query(std::string("SELECT ") + floor_columns + "WHERE map_id = $1", {std::to_string(map_id)});
  if (r.empty()) return std::nullopt;
  return read_floor(r[0]);
}

std::vector<RouteFloor> route_floors(shardio::RawConn& shard) {
  std::vector<RouteFloor> out;
  if (!has_route_floors_table(shard)) return out;
  for (const auto& r : shard.query(std::string("SELECT ") + floor_columns + "ORDER BY map_id")) out.push_back(read_floor(r));
  return out;
}

void lock_route_floor(shardio::RawConn& shard, std::int64_t map_id) {
  shard.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", {floor_lock_key(map_id)});
}

void unlock_route_floor(shardio::RawConn& shard, std::int64_t map_id) {
  shard.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", {floor_lock_key(map_id)});
}

}  // namespace shardctl::shardside
