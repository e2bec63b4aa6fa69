#include "shardside/stream_keys.hpp"

#include "core/error.hpp"
#include "shardside/names.hpp"
#include "shardside/sql.hpp"

namespace shardctl::shardside {
namespace {

bool tables_exist(shardio::RawConn& target) {
  return target.query("SELECT to_regclass($1) IS NOT NULL", {stream_keys_table})[0][0] == "t";
}

// The trigger's arguments: the key column's name and the table's quoted name.
std::string trigger_args(shardio::RawConn& target, const GuardedTable& t) {
  return target.literal(t.key_column) + ", " + target.literal(t.quoted_table);
}

// Whether the table's own trigger (not a partition's clone) and every clone of it are as
// install_trigger() makes them: this function, these arguments, enabled REPLICA.
bool trigger_current(shardio::RawConn& target, const GuardedTable& t) {
  // pg_trigger.tgargs holds each argument NUL-terminated.
  auto r = target.query(
      "WITH RECURSIVE own AS ("
      "  SELECT g.oid, g.tgenabled, g.tgfoid, g.tgargs AS args FROM pg_trigger g "
      "  WHERE g.tgrelid = $1::regclass AND g.tgname = $2 AND g.tgparentid = 0 "
      "  UNION ALL SELECT g.oid, g.tgenabled, g.tgfoid, own.args FROM pg_trigger g JOIN own ON g.tgparentid = own.oid) "
      "SELECT count(*) > 0 AND bool_and(tgenabled = 'R') AND bool_and(tgfoid = to_regprocedure($3 || '()')) "
      "AND bool_and(args = convert_to($4, current_setting('server_encoding')) || '\\x00'::bytea "
      "|| convert_to($5, current_setting('server_encoding')) || '\\x00'::bytea) FROM own",
      {t.quoted_table, stream_keys_trigger, stream_keys_function, t.key_column, t.quoted_table});
  return r[0][0] == "t";
}

}  // namespace

void install_stream_key_trigger(shardio::RawConn& target, const GuardedTable& t) {
  if (target.query("SELECT to_regprocedure($1 || '()') IS NULL OR to_regclass($2) IS NULL OR to_regclass($3) IS NULL",
                   {stream_keys_function, stream_watch_table, stream_keys_table})[0][0] == "t")
    target.script(std::string(sql::stream_keys));
  if (trigger_current(target, t)) return;
  target.exec(std::string("DROP TRIGGER IF EXISTS ") + stream_keys_trigger + " ON " + t.quoted_table);
  target.exec(std::string("CREATE TRIGGER ") + stream_keys_trigger + " AFTER INSERT OR UPDATE OR DELETE ON " + t.quoted_table +
              " FOR EACH ROW EXECUTE FUNCTION " + stream_keys_function + "(" + trigger_args(target, t) + ")");
  target.exec(std::string("ALTER TABLE ") + t.quoted_table + " ENABLE REPLICA TRIGGER " + stream_keys_trigger);
  // A partition's clone keeps the state the trigger had when it was cloned, whatever ALTER
  // TABLE on the root does in a given server version: each one is enabled by itself.
  for (const auto& r : target.query(
           "WITH RECURSIVE own AS (SELECT oid FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = $2 AND tgparentid = 0 "
           "  UNION ALL SELECT g.oid FROM pg_trigger g JOIN own ON g.tgparentid = own.oid) "
           "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_trigger g JOIN own ON own.oid = g.oid "
           "JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
           "WHERE g.tgparentid <> 0 AND g.tgenabled <> 'R'",
           {t.quoted_table, stream_keys_trigger}))
    target.exec("ALTER TABLE " + r[0] + " ENABLE REPLICA TRIGGER " + stream_keys_trigger);
  if (!trigger_current(target, t))
    throw internal_error("the trigger " + std::string(stream_keys_trigger) + " on " + t.quoted_table + " of " + target.role() +
                         " is not enabled REPLICA on every partition after it was installed");
}

bool watch_stream(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables) {
  if (!tables_exist(target)) return false;
  for (const auto& t : tables)
    if (!trigger_current(target, t)) return false;
  for (const auto& t : tables)
    target.query("INSERT INTO shardctl.stream_watch (tbl, stream) VALUES ($1, $2) ON CONFLICT DO NOTHING", {t.quoted_table, stream});
  target.query("DELETE FROM shardctl.stream_keys WHERE stream = $1", {stream});
  return true;
}

std::vector<std::string> stream_keys(shardio::RawConn& target, const std::string& stream, const std::string& quoted_table) {
  std::vector<std::string> out;
  for (const auto& r : target.query("SELECT key FROM shardctl.stream_keys WHERE stream = $1 AND tbl = $2", {stream, quoted_table}))
    out.push_back(r[0]);
  return out;
}

std::int64_t stream_key_count(shardio::RawConn& target, const std::string& stream) {
  if (!tables_exist(target)) return 0;
  return std::stoll(target.query("SELECT count(*) FROM shardctl.stream_keys WHERE stream = $1", {stream})[0][0]);
}

void unwatch_stream(shardio::RawConn& target, const std::string& stream) {
  if (!tables_exist(target)) return;
  target.query("DELETE FROM shardctl.stream_watch WHERE stream = $1", {stream});
  target.query("DELETE FROM shardctl.stream_keys WHERE stream = $1", {stream});
}

std::vector<std::string> watched_streams(shardio::RawConn& target) {
  std::vector<std::string> out;
  if (!tables_exist(target)) return out;
  for (const auto& r : target.query("SELECT DISTINCT stream FROM shardctl.stream_watch ORDER BY 1")) out.push_back(r[0]);
  return out;
}

bool drop_stream_watch(shardio::RawConn& target, const std::string& stream) {
  if (!tables_exist(target)) return false;
  bool there = target.query("SELECT EXISTS (SELECT FROM shardctl.stream_watch WHERE stream = $1)", {stream})[0][0] == "t";
  unwatch_stream(target, stream);
  return there;
}

void drop_unwatched_trigger(shardio::RawConn& target, const GuardedTable& t) {
  if (!tables_exist(target)) return;
  if (target.query("SELECT to_regclass($1) IS NOT NULL AND NOT EXISTS (SELECT FROM shardctl.stream_watch WHERE tbl = $1) "
                   "AND EXISTS (SELECT FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2)",
                   {t.quoted_table, stream_keys_trigger})[0][0] == "t")
    target.exec(std::string("DROP TRIGGER IF EXISTS ") + stream_keys_trigger + " ON " + t.quoted_table);
}

}  // namespace shardctl::shardside
