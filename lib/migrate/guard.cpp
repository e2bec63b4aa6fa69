#include "migrate/guard.hpp"

namespace shardctl::migrate {
namespace {

// Bounds are kept as text and compared after a cast chosen by the trigger's second argument,
// so one function serves every key type and map kind.
constexpr const char* guard_sql = R"SQL(
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.offline_ranges (
  op_id uuid NOT NULL,
  batch_no integer NOT NULL,
  lo text,
  hi text,
  PRIMARY KEY (op_id, batch_no)
);
CREATE OR REPLACE FUNCTION shardctl.guard_blocks(v text, how text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  h bigint;
BEGIN
  IF v IS NULL THEN RETURN false; END IF;
  CASE how
    WHEN 'int' THEN h := v::bigint;
    WHEN 'hash_int' THEN h := hashint4extended(v::int4, 0);
    WHEN 'hash_bigint' THEN h := hashint8extended(v::int8, 0);
    WHEN 'hash_text' THEN h := hashtextextended(v, 0);
    WHEN 'hash_uuid' THEN h := uuid_hash_extended(v::uuid, 0);
    WHEN 'text' THEN
      RETURN EXISTS (SELECT 1 FROM shardctl.offline_ranges o
                     WHERE (o.lo IS NULL OR v COLLATE "C" >= o.lo COLLATE "C")
                       AND (o.hi IS NULL OR v COLLATE "C" < o.hi COLLATE "C"));
    WHEN 'uuid' THEN
      RETURN EXISTS (SELECT 1 FROM shardctl.offline_ranges o
                     WHERE (o.lo IS NULL OR v::uuid >= o.lo::uuid) AND (o.hi IS NULL OR v::uuid < o.hi::uuid));
    ELSE RAISE EXCEPTION 'shardctl guard: unknown key kind %', how;
  END CASE;
  RETURN EXISTS (SELECT 1 FROM shardctl.offline_ranges o
                 WHERE (o.lo IS NULL OR h >= o.lo::bigint) AND (o.hi IS NULL OR h < o.hi::bigint));
END
$fn$;
CREATE OR REPLACE FUNCTION shardctl.guard() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  col text := TG_ARGV[0];
  how text := TG_ARGV[1];
  v text;
BEGIN
  IF coalesce(current_setting('shardctl.guard_bypass', true), '') = 'on' THEN
    RETURN coalesce(NEW, OLD);
  END IF;
  -- The row's key before (UPDATE, DELETE) and after (INSERT, UPDATE) the change.
  FOREACH v IN ARRAY ARRAY[CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) ->> col END,
                           CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) ->> col END] LOOP
    IF shardctl.guard_blocks(v, how) THEN
      RAISE EXCEPTION 'key % of %.% is being moved by shardctl; writes to it are refused until the move finishes',
        v, TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = '55000', HINT = 'retry when the batch is done; `shardctl op list` shows the operation';
    END IF;
  END LOOP;
  RETURN coalesce(NEW, OLD);
END
$fn$;
)SQL";

std::string how_of(const RouteSpace& space) {
  std::string type(routing::key_type_name(space.key_type));
  if (space.kind == routing::MapKind::hash) return "hash_" + type;
  if (space.key_type == routing::KeyType::int4 || space.key_type == routing::KeyType::int8) return "int";
  return type;
}

}  // namespace

void install_guard(RawConn& shard, const RouteSpace& space, const std::vector<GuardedTable>& tables) {
  shard.exec("BEGIN");
  shard.exec("SELECT pg_advisory_xact_lock(1397244740, 2)");  // concurrent installs queue
  shard.exec(guard_sql);
  for (const auto& t : tables)
    shard.exec("CREATE OR REPLACE TRIGGER shardctl_guard BEFORE INSERT OR UPDATE OR DELETE ON " + t.quoted_table +
               " FOR EACH ROW EXECUTE FUNCTION shardctl.guard(" + shard.literal(t.key_column) + ", " +
               shard.literal(how_of(space)) + ")");
  shard.exec("COMMIT");
}

void add_offline_range(RawConn& shard, const std::string& op_id, int batch_no, const routing::KeyRange& range) {
  std::string lo = range.low ? shard.literal(routing::format_key(*range.low)) : "NULL";
  std::string hi = range.high ? shard.literal(routing::format_key(*range.high)) : "NULL";
  shard.query("INSERT INTO shardctl.offline_ranges (op_id, batch_no, lo, hi) VALUES ($1, $2, " + lo + ", " + hi +
                  ") ON CONFLICT DO NOTHING",
              {op_id, std::to_string(batch_no)});
}

void remove_guard(RawConn& shard, const std::string& op_id, const std::vector<GuardedTable>& tables) {
  shard.exec("BEGIN");
  shard.exec("SELECT pg_advisory_xact_lock(1397244740, 2)");
  auto has_table = shard.query("SELECT to_regclass('shardctl.offline_ranges') IS NOT NULL");
  bool others = false;
  if (has_table[0][0] == "t") {
    shard.query("DELETE FROM shardctl.offline_ranges WHERE op_id = $1", {op_id});
    others = shard.query("SELECT EXISTS (SELECT 1 FROM shardctl.offline_ranges)")[0][0] == "t";
  }
  if (!others)
    for (const auto& t : tables) shard.exec("DROP TRIGGER IF EXISTS shardctl_guard ON " + t.quoted_table);
  shard.exec("COMMIT");
}

}  // namespace shardctl::migrate
