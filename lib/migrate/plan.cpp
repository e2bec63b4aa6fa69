// Engine::plan_split / plan_merge / plan_move: preconditions and batch planning. Reads only.
// Each kind finds its segments (which part of which mapping moves from which shard); the
// checks and the batch planning are shared (finish_plan).
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "migrate/batch_plan.hpp"
#include "migrate/claim.hpp"
#include "migrate/load_path.hpp"
#include "migrate/operation.hpp"
#include "migrate/preconditions.hpp"
#include "refdata/compare.hpp"
#include "routing/pg_hash.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/shard_schema.hpp"
#include "shardside/names.hpp"

namespace shardctl::migrate {
using routing::KeyRange;
using routing::MapKind;

namespace {

shardio::KeyColumn key_column(const PlannedTable& t) { return shardio::KeyColumn{catalog::quote_ident(t.key_column), t.key_own_collation}; }

// Which of `tables` (parents first) hold no key that an earlier table lacks, by a validated
// foreign key from the table's key column to the earlier table's key column, checked for every
// row: MATCH FULL, or every referencing column NOT NULL (under MATCH SIMPLE a NULL in another
// column skips the check). Their keys add nothing to the distinct keys of the tables before.
// On a heap whose rows arrived over time, reading every child's keys was a tenth of a move
// (bench/README.md, "moves on a scattered heap"). Only batch sizes rest on it: batches cover
// their whole range whatever keys were counted, so rows an application loaded with its
// triggers disabled still move.
std::vector<bool> keys_covered(shardio::RawConn& source, const std::vector<PlannedTable>& tables) {
  std::vector<bool> covered(tables.size(), false);
  if (tables.size() < 2) return covered;
  std::vector<std::string> names, keys;
  for (const auto& t : tables) names.push_back(t.quoted), keys.push_back(t.key_column);
  auto rows = source.query(
      "WITH t AS (SELECT to_regclass(q) AS oid, key, ord FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(q, key, ord)) "
      "SELECT DISTINCT ct.ord FROM pg_constraint c "
      "JOIN t ct ON ct.oid = c.conrelid JOIN t pt ON pt.oid = c.confrelid AND pt.ord < ct.ord "
      "CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(ck, pk) "
      "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.ck AND a.attname = ct.key "
      "JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.pk AND pa.attname = pt.key "
      "WHERE c.contype = 'f' AND c.convalidated AND c.conparentid = 0 AND (c.confmatchtype = 'f' OR NOT EXISTS "
      "(SELECT 1 FROM unnest(c.conkey) AS n(attnum) JOIN pg_attribute na ON na.attrelid = c.conrelid AND na.attnum = n.attnum "
      "WHERE NOT na.attnotnull))",
      {catalog::text_array_literal(names), catalog::text_array_literal(keys)});
  for (const auto& r : rows) covered.at(std::stoul(r[0]) - 1) = true;
  return covered;
}

// Batch boundaries: every batch_size-th distinct routing value in the moving range, over the
// union of the sharded tables (but those keys_covered), so sparse keys still give batches of
// about that many keys (batch_plan.hpp cuts the range at them).
std::vector<PlannedBatch> plan_batches(shardio::RawConn& source, const Plan& plan, std::size_t segment, int batch_size) {
  const KeyRange& range = plan.segments[segment].range;
  if (plan.point) return {PlannedBatch{segment, range, 1}};  // one shardlet
  std::vector<std::string> parts;
  auto covered = keys_covered(source, plan.tables);
  for (std::size_t i = 0; i < plan.tables.size(); ++i) {
    const auto& t = plan.tables[i];
    if (covered[i]) continue;
    std::string col = catalog::quote_ident(t.key_column);
    parts.push_back("SELECT " + col + " AS key FROM " + t.quoted + " WHERE " + shardio::key_filter(source, plan.space, key_column(t), range));
  }
  // Rows of the result: every batch_size-th key after the first (a bound), and the last key
  // (for the total).
  std::string sql = "SELECT k::text, rn, total FROM (SELECT k, row_number() OVER (ORDER BY k) AS rn, count(*) OVER () AS total "
                    "FROM (SELECT DISTINCT " + shardio::route_expression(plan.space, "key") + " AS k FROM (" + join(parts, " UNION ALL ") +
                    ") u WHERE key IS NOT NULL) d) x WHERE ((rn - 1) % " + std::to_string(batch_size) + " = 0 AND rn > 1) OR rn = total ORDER BY rn";
  routing::KeyType bound_type = catalog::bound_type(plan.space.kind, plan.space.key_type);
  std::vector<BatchBound> bounds;
  std::int64_t total = 0;
  for (auto& row : source.query(sql)) {
    std::int64_t rn = std::stoll(row[1]);
    total = std::stoll(row[2]);
    if (starts_batch(rn, batch_size)) bounds.push_back(BatchBound{routing::parse_key(bound_type, row[0]), rn});
  }
  return batches_at(segment, range, bounds, total);
}

// Distinct routing values in the range of the first table (parents first: the table every
// other one hangs from, whose keys cover theirs), to size batches by bytes per key.
std::int64_t distinct_keys(shardio::RawConn& source, const Plan& plan, const KeyRange& range) {
  if (plan.point) return 1;
  const auto& t = plan.tables.front();
  return std::stoll(source.query("SELECT count(DISTINCT " + shardio::route_expression(plan.space, catalog::quote_ident(t.key_column)) +
                                 ") FROM " + t.quoted + " WHERE " + shardio::key_filter(source, plan.space, key_column(t), range))[0][0]);
}

// The rows that move (all tables) and the bytes they take on the source, heap and indexes:
// rows in the range times the table's average bytes per row.
std::pair<std::int64_t, std::uint64_t> estimate_size(shardio::RawConn& source, const Plan& plan, const KeyRange& range) {
  double bytes = 0;
  std::int64_t rows = 0;
  for (const auto& t : plan.tables) {
    // Rows of the whole table from the planner's statistics; counted only when the table was
    // never analyzed (a full count of a large shard would cost more than the plan).
    std::string reg = source.literal(t.quoted) + "::regclass";
    auto r = source.query("SELECT n, n::float8 * pg_total_relation_size(" + reg + ") / greatest(CASE WHEN c.reltuples > 0 "
                          "THEN c.reltuples ELSE (SELECT count(*) FROM " + t.quoted + ") END, 1) FROM (SELECT count(*) AS n FROM " +
                          t.quoted + " WHERE " + shardio::key_filter(source, plan.space, key_column(t), range) +
                          ") m, pg_class c WHERE c.oid = " + reg);
    rows += std::stoll(r[0][0]);
    bytes += std::stod(r[0][1]);
  }
  return {rows, static_cast<std::uint64_t>(bytes)};
}

// Free bytes on the file system holding the target's data directory, when shardctl can see
// it: a unix-socket connection (same machine) whose role may read data_directory.
// SHARDCTL_ASSUME_FREE_BYTES overrides it (a testing aid, documented in shardctl-split(1)).
std::optional<std::uint64_t> free_bytes(shardio::RawConn& target) {
  if (const char* assumed = std::getenv("SHARDCTL_ASSUME_FREE_BYTES")) return std::strtoull(assumed, nullptr, 10);
  try {
    auto r = target.query("SELECT inet_server_addr() IS NULL, current_setting('data_directory')");
    if (r[0][0] != "t") return std::nullopt;
    struct statvfs vfs {};
    if (statvfs(r[0][1].c_str(), &vfs) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  } catch (const Error&) {
    return std::nullopt;  // not allowed to read data_directory: not readable
  }
}

std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + 999'999) / 1'000'000) + " MB"; }

// What every kind starts with: the batch size checked, the map looked up, the request kept.
Plan new_plan(catalog::Store& store, journal::OperationKind kind, const std::string& map, int batch_size, std::int64_t batch_bytes,
              nlohmann::json args) {
  if (batch_bytes <= 0 && batch_size < 1) throw usage_error("--batch-size must be at least 1");
  Plan plan;
  plan.kind = kind;
  plan.batch_size = batch_size;
  plan.batch_bytes = batch_bytes;
  if (batch_bytes > 0) args["batch_bytes"] = batch_bytes;
  plan.args = std::move(args);
  plan.map = store.get_map(map);
  plan.space = shardio::RouteSpace{plan.map.kind, plan.map.key_type};
  return plan;
}

// What a segment moves, as problems name it: the list point, or the segment's range.
std::string what_moves(const Plan& plan, const Segment& s) {
  return plan.point ? "key " + routing::format_key(*plan.point) : routing::format_range(s.range);
}

// Refuses (usage Error) with every problem found, when there is any.
void refuse_problems(const Plan& plan, const std::vector<std::string>& problems) {
  if (!problems.empty()) throw usage_error("cannot " + std::string(journal::to_text(plan.kind)) + ": " + join(problems, "; "));
}

// What the catalog alone says against the plan: a source that is the target, a shard not
// online, a map without sharded tables (all refused together, each once). Returns the map's
// sharded tables; keeps every reference table in plan.references.
std::vector<catalog::TableDef> check_catalog(catalog::Store& store, Plan& plan) {
  std::vector<std::string> problems;
  for (const auto& s : plan.segments) {
    if (s.source.name == plan.target.name)
      problems.push_back("shard " + plan.target.name + " already holds " + what_moves(plan, s));
    if (s.source.status != catalog::ShardStatus::online)
      problems.push_back("source shard " + s.source.name + " is " + std::string(catalog::to_text(s.source.status)));
  }
  if (plan.target.status != catalog::ShardStatus::online)
    problems.push_back("target shard " + plan.target.name + " is " + std::string(catalog::to_text(plan.target.status)));
  std::vector<catalog::TableDef> sharded;
  for (auto& t : store.list_tables()) {
    if (t.kind == catalog::TableKind::sharded && t.map == plan.map.name) sharded.push_back(t);
    if (t.kind == catalog::TableKind::reference) plan.references.push_back(catalog::quote_qualified(t.name));
  }
  if (sharded.empty())
    problems.push_back("map " + plan.map.name + " has no sharded tables declared (`shardctl table add-sharded`)");
  std::sort(problems.begin(), problems.end());
  problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
  refuse_problems(plan, problems);
  return sharded;
}

// Connections to the plan's shards: the target, and each source once.
struct PlanShards {
  shardio::RawConn target;
  std::map<std::string, std::unique_ptr<shardio::RawConn>> sources;  // by shard name

  explicit PlanShards(const Plan& plan) : target(plan.target.dsn, "shard " + plan.target.name) {
    for (const auto& s : plan.segments)
      if (!sources.count(s.source.name))
        sources[s.source.name] = std::make_unique<shardio::RawConn>(s.source.dsn, "shard " + s.source.name);
  }
  shardio::RawConn& source(const Segment& s) { return *sources.at(s.source.name); }
};

// One sharded table on one source against the target: present on both, the same columns, an
// index that leads with the key (else a warning), no DELETE trigger the purge would fire.
// False when the table is missing on either.
bool check_table_shape(Plan& plan, const catalog::TableDef& t, const std::string& source_name, shardio::RawConn& source,
                       shardio::RawConn& target, std::vector<std::string>& problems) {
  std::string q = catalog::quote_qualified(t.name);
  auto src_cols = shardio::table_columns(source, q);
  auto dst_cols = shardio::table_columns(target, q);
  if (src_cols.empty()) {
    problems.push_back("table " + t.name + " is missing on source shard " + source_name);
    return false;
  }
  if (dst_cols.empty()) {
    problems.push_back("table " + t.name + " is missing on target shard " + plan.target.name);
    return false;
  }
  auto key = [](const shardio::Column& c) { return c.name + " " + c.type; };
  std::set<std::string> a, b;
  for (const auto& c : src_cols) a.insert(key(c));
  for (const auto& c : dst_cols) b.insert(key(c));
  if (a != b) problems.push_back("table " + t.name + " has different columns on " + source_name + " and " + plan.target.name);
  switch (shardio::key_index(source, q, *t.key_column)) {
    case shardio::KeyIndex::none:
      // Nothing in a move needs unique rows (batches go by key range, verify and purge
      // compare multisets); whether batch statements can use an index is checked by
      // check_index_use.
      break;
    case shardio::KeyIndex::non_leading:
      plan.warnings.push_back("the key index of " + t.name + " does not lead with " + *t.key_column + " (slower batches)");
      break;
    case shardio::KeyIndex::leading: break;
  }
  auto triggers = shardio::delete_triggers(source, q);
  std::erase_if(triggers, [](const std::string& name) { return shardside::is_guard_trigger(name); });
  if (!triggers.empty())
    problems.push_back("table " + t.name + " has DELETE trigger(s) " + join(triggers, ", ") + " on " + source_name +
                       " that the purge of moved rows would fire");
  return true;
}

// Every sharded table's shape, once per source shard; each table described (plan.tables) from
// the first source that has it. False when a table is missing anywhere.
bool check_table_shapes(Plan& plan, const std::vector<catalog::TableDef>& sharded, PlanShards& shards,
                        std::vector<std::string>& problems) {
  bool present = true;
  for (auto& [source_name, source] : shards.sources)
    for (const auto& t : sharded) {
      if (!check_table_shape(plan, t, source_name, *source, shards.target, problems)) {
        present = false;
        continue;
      }
      if (plan.tables.size() < sharded.size()) plan.tables.push_back(describe_table(*source, t, plan.space.kind));
    }
  return present;
}

// Text compared (or hashed) in the column's own collation only where, on every shard that
// runs batch statements, that gives the answers bytes give (shardio::own_collation_fits).
void narrow_key_collations(Plan& plan, PlanShards& shards) {
  for (auto& t : plan.tables) {
    if (!t.key_own_collation) continue;
    for (auto& [name, source] : shards.sources)
      t.key_own_collation = t.key_own_collation && shardio::own_collation_fits(*source, t.quoted, t.key_column, plan.space.kind);
    t.key_own_collation = t.key_own_collation && shardio::own_collation_fits(shards.target, t.quoted, t.key_column, plan.space.kind);
  }
}

// The checks over the whole schema (preconditions.hpp): foreign keys, NULL keys and index use
// on every source, index use on the target, unmoved parents per segment.
void check_schema(const Plan& plan, PlanShards& shards, std::vector<std::string>& problems) {
  for (auto& [source_name, source] : shards.sources) {
    check_foreign_keys_into(*source, source_name, plan, problems);
    check_foreign_keys_among(*source, source_name, plan, problems);
    check_null_keys(*source, source_name, plan, problems);
    check_index_use(*source, source_name, plan, problems);
  }
  check_index_use(shards.target, plan.target.name, plan, problems);
  for (const auto& s : plan.segments) check_unmoved_parents(shards.source(s), s.source.name, shards.target, plan, s.range, problems);
}

// Each segment's range holds no row of any table on the target yet.
void check_target_ranges_empty(const Plan& plan, shardio::RawConn& target, std::vector<std::string>& problems) {
  for (const auto& s : plan.segments)
    for (const auto& t : plan.tables) {
      if (shardio::table_columns(target, t.quoted).empty()) continue;  // reported with the shapes
      if (target.query("SELECT EXISTS (SELECT 1 FROM " + t.quoted + " WHERE " + shardio::key_filter(target, plan.space, key_column(t), s.range) +
                       ")")[0][0] == "t")
        problems.push_back("the target range " + what_moves(plan, s) + " of " + t.name + " is not empty on " + plan.target.name);
    }
}

// Reference tables are copied to the target when empty there. A filled copy must equal the
// first source's (refdata::compare_pair, chunk digests on both servers): one that differs is
// a problem, unless `sync` (--sync-references) asks to sync it first (Runner::sync_references).
// A missing one is a problem.
void check_reference_tables(Plan& plan, PlanShards& shards, bool sync, std::vector<std::string>& problems) {
  std::vector<refdata::RefTable> filled;
  for (const auto& ref : plan.references) {
    if (shardio::table_columns(shards.target, ref).empty())
      problems.push_back("reference table " + ref + " is missing on target shard " + plan.target.name);
    else if (shards.target.query("SELECT EXISTS (SELECT 1 FROM " + ref + ")")[0][0] == "t")
      filled.push_back({ref, ref, std::nullopt, std::nullopt});
  }
  if (filled.empty() || plan.segments.empty()) return;
  const auto& from = plan.segments.front().source;
  shardio::RawConn& source = shards.source(plan.segments.front());
  source.script(shardio::session_settings);
  shards.target.script(shardio::session_settings);
  for (const auto& r : refdata::compare_pair(from.name, source, plan.target.name, shards.target, filled)) {
    std::string how;
    if (!r.drift.empty()) how = "has other columns or another primary key (" + r.drift.front().detail + ")";
    else if (!r.differs.empty()) {
      const auto& d = r.differs.front();
      how = "differs in " + std::to_string(d.differing_chunks) + " chunk(s): " + std::to_string(d.rows.missing.size()) +
            " row(s) missing, " + std::to_string(d.rows.extra.size()) + " extra, " + std::to_string(d.rows.changed.size()) +
            " changed";
    } else continue;
    if (sync && r.drift.empty() && !r.by_row) {
      plan.references_to_sync.push_back(r.table);
      plan.warnings.push_back("reference table " + r.table + " on " + plan.target.name + " " + how + " from " + from.name +
                              "'s: synced from " + from.name + " before the first batch");
    } else {
      problems.push_back("reference table " + r.table + " on " + plan.target.name + " " + how + " from " + from.name + "'s" +
                         (r.drift.empty() ? " (`shardctl table sync-reference " + r.table + " --from " + from.name +
                                                "` makes it identical, or give the move --sync-references)"
                         : " (make the table's definition match first)") +
                         (sync && r.drift.empty() && r.by_row ? "; it has no primary key: a move does not replace it whole "
                                                                "(`shardctl table sync-reference --allow-no-pk` does)"
                                                              : ""));
    }
  }
}

// Each segment's size on its source and its batches: batch_size keys each, or with batch_bytes
// as many keys as make that many bytes at the segment's bytes per key (the first segment's
// count becomes the plan's batch_size).
void plan_segments(Plan& plan, PlanShards& shards) {
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    shardio::RawConn& source = shards.source(plan.segments[i]);
    auto [rows, bytes] = estimate_size(source, plan, plan.segments[i].range);
    plan.rows_total += rows;
    plan.estimated_bytes += bytes;
    int size = plan.batch_size;
    if (plan.batch_bytes > 0) {
      size = keys_per_batch(plan.batch_bytes, bytes, distinct_keys(source, plan, plan.segments[i].range));
      if (i == 0) plan.batch_size = size;
    }
    for (const auto& b : plan_batches(source, plan, i, size)) {
      plan.keys_total += b.keys;
      plan.batches.push_back(b);
    }
  }
}

// Refuses a target without room for what moves (batch_plan.hpp: room_needed), where its free
// space can be read.
void refuse_if_target_full(Plan& plan, shardio::RawConn& target) {
  plan.target_free_bytes = free_bytes(target);
  std::uint64_t needed = room_needed(plan.estimated_bytes);
  if (plan.target_free_bytes && *plan.target_free_bytes < needed)
    throw usage_error("cannot " + std::string(journal::to_text(plan.kind)) + ": target shard " + plan.target.name + " has " +
                          megabytes(*plan.target_free_bytes) + " free where it keeps its data; the rows that move take about " +
                          megabytes(plan.estimated_bytes) + " (" + megabytes(needed) + " with margin)",
                      "free space on " + plan.target.name + " or choose another target shard");
}

}  // namespace

Plan Engine::plan_split(const SplitRequest& req) {
  catalog::Store store(catalog_);
  Plan plan = new_plan(store, journal::OperationKind::split, req.map, req.batch_size, req.batch_bytes,
                       {{"map", req.map}, {"at", req.at}, {"to", req.to}, {"move", req.move_upper ? "upper" : "lower"},
                        {"batch_size", req.batch_size}});
  if (plan.map.kind == MapKind::list)
    throw usage_error("map " + req.map + " is a list map: split cuts ranges", "move a point with `shardctl move`");
  routing::KeyType bound_type = catalog::bound_type(plan.map.kind, plan.map.key_type);
  routing::Key at = routing::parse_key(bound_type, req.at);
  plan.target = store.get_shard(req.to);
  // Before reading the mappings: a running operation has cut them into its batches.
  refuse_if_operation_overlaps(catalog_, plan.map, catalog::point_params(bound_type, at), "--at " + routing::format_key(at));

  auto mappings = store.list_mappings(req.map);
  auto holder = std::find_if(mappings.begin(), mappings.end(),
                             [&](const catalog::Mapping& m) { return routing::range_contains(m.range, at); });
  if (holder == mappings.end())
    throw usage_error("--at " + routing::format_key(at) + " is outside every mapping of map " + req.map,
                      "`shardctl map show " + req.map + "` shows the mapped ranges");
  if (holder->range.low && routing::compare_keys(*holder->range.low, at) == 0)
    throw usage_error("--at " + routing::format_key(at) + " is where mapping " + routing::format_range(holder->range) +
                          " already starts: there is nothing to split",
                      "to move the whole mapping use `shardctl move`");
  Segment seg{store.get_shard(holder->shard), *holder, split_side(holder->range, at, req.move_upper)};
  plan.range = seg.range;
  plan.segments.push_back(seg);
  finish_plan(plan);
  return plan;
}

Plan Engine::plan_merge(const MergeRequest& req) {
  catalog::Store store(catalog_);
  Plan plan = new_plan(store, journal::OperationKind::merge, req.map, req.batch_size, req.batch_bytes,
                       {{"map", req.map}, {"range", req.range}, {"into", req.into}, {"batch_size", req.batch_size}});
  if (plan.map.kind == MapKind::list)
    throw usage_error("map " + req.map + " is a list map: it has points, not ranges to merge",
                      "move one point with `shardctl move --map " + req.map + " --key K --to SHARD`");
  KeyRange wanted = routing::parse_range(catalog::bound_type(plan.map.kind, plan.map.key_type), req.range);
  plan.target = store.get_shard(req.into);
  // Before reading the mappings: a running operation has cut them into its batches.
  refuse_if_operation_overlaps(catalog_, plan.map, catalog::range_params(wanted), "--range " + routing::format_range(wanted));
  std::map<std::string, catalog::Shard> shards;
  for (const auto& s : store.list_shards()) shards[s.name] = s;
  bool any = false;
  // The operation claims the moving parts and the target's own mappings in the range, so that
  // at the end they coalesce into one mapping.
  std::optional<KeyRange> claim;
  for (const auto& m : store.list_mappings(req.map)) {
    if (!routing::ranges_overlap(m.range, wanted)) continue;
    any = true;
    KeyRange part = part_within(m.range, wanted);
    KeyRange claimed = m.shard == plan.target.name ? m.range : part;
    claim = claim ? span_of(*claim, claimed) : claimed;
    if (m.shard != plan.target.name) plan.segments.push_back(Segment{shards.at(m.shard), m, part});
  }
  if (!any)
    throw usage_error("no mapping of map " + req.map + " overlaps " + routing::format_range(wanted),
                      "`shardctl map show " + req.map + "` shows the mapped ranges");
  if (plan.segments.empty())
    throw usage_error("every mapping of map " + req.map + " in " + routing::format_range(wanted) + " is already on " +
                      plan.target.name + ": there is nothing to merge");
  plan.range = *claim;
  finish_plan(plan);
  return plan;
}

Plan Engine::plan_move(const MoveRequest& req) {
  catalog::Store store(catalog_);
  Plan plan = new_plan(store, journal::OperationKind::move, req.map, req.batch_size, req.batch_bytes,
                       {{"map", req.map}, {"key", req.key}, {"to", req.to}, {"batch_size", req.batch_size}});
  routing::Key key = routing::parse_key(plan.map.key_type, req.key);
  plan.target = store.get_shard(req.to);
  // Where the key routes: the key itself, or its hash for hash maps.
  routing::Key routed = plan.map.kind == MapKind::hash ? routing::Key{routing::hash_key(plan.map.key_type, key)} : key;
  // Before reading the mappings: a running operation has cut them into its batches.
  refuse_if_operation_overlaps(catalog_, plan.map, catalog::point_params(catalog::bound_type(plan.map.kind, plan.map.key_type), routed),
                               "key " + req.key);
  std::optional<catalog::Mapping> holder;
  for (const auto& m : store.list_mappings(req.map)) {
    bool holds = m.is_point ? routing::compare_keys(*m.range.low, routed) == 0 : routing::range_contains(m.range, routed);
    if (holds) holder = m;
  }
  if (!holder)
    throw usage_error("key " + req.key + " is not mapped in map " + req.map,
                      plan.map.kind == MapKind::list ? "add it with `shardctl mapping add --map " + req.map +
                                                           " --point " + req.key + " --shard SHARD`"
                                                     : "`shardctl map show " + req.map + "` shows the mapped ranges");
  Segment seg{store.get_shard(holder->shard), *holder, holder->range};
  if (plan.map.kind == MapKind::list) {
    plan.point = key;
    seg.range = routing::point_range(plan.map.key_type, key);
  }
  plan.range = seg.range;
  plan.segments.push_back(seg);
  finish_plan(plan);
  return plan;
}

void Engine::finish_plan(Plan& plan) {
  catalog::Store store(catalog_);
  // The whole claim, now that it is known (a split's or move's reaches past the requested key).
  refuse_if_operation_overlaps(catalog_, plan.map,
                               catalog::claim_params(catalog::bound_type(plan.map.kind, plan.map.key_type), plan.point, plan.range),
                               routing::format_range(plan.range));
  refuse_if_offline(plan, store.list_mappings(plan.map.name));
  auto sharded = check_catalog(store, plan);

  PlanShards shards(plan);
  std::vector<std::string> problems;
  // The schema-wide checks need every table on every source and the target.
  if (check_table_shapes(plan, sharded, shards, problems) && plan.tables.size() == sharded.size()) {
    narrow_key_collations(plan, shards);
    check_schema(plan, shards, problems);
  }
  check_target_ranges_empty(plan, shards.target, problems);
  check_reference_tables(plan, shards, options_.sync_references, problems);
  refuse_problems(plan, problems);

  // Reference tables too: nation REFERENCES region needs region first. The target's foreign
  // keys are the ones the copy must satisfy.
  sort_references_by_foreign_keys(shards.target, plan.references);
  // Parents before children for the copy; the purge runs in reverse.
  sort_by_foreign_keys(*shards.sources.begin()->second, plan.tables);
  {
    std::vector<shardio::RawConn*> srcs;
    for (auto& [name, conn] : shards.sources) srcs.push_back(conn.get());
    plan.load_path = choose_load_path(shards.target, srcs, plan.tables, plan.references, options_.checked_load).why;
  }
  plan_segments(plan, shards);
  refuse_if_target_full(plan, shards.target);
}

}  // namespace shardctl::migrate
