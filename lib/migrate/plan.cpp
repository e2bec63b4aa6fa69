// Engine::plan_split: preconditions and batch planning. Reads only.
#include <algorithm>
#include <map>
#include <set>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/operation.hpp"
#include "migrate/raw_conn.hpp"
#include "migrate/shard_schema.hpp"

namespace shardctl::migrate {
using routing::KeyRange;
using routing::MapKind;

namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

// Batch boundaries: every batch_size-th distinct routing value in the moving range, over the
// union of all sharded tables, so sparse keys still give batches of about that many keys.
std::vector<KeyRange> plan_batches(RawConn& source, const Plan& plan, int batch_size) {
  std::vector<std::string> parts;
  for (const auto& t : plan.tables) {
    std::string col = catalog::quote_ident(t.key_column);
    parts.push_back("SELECT " + col + " AS key FROM " + t.quoted + " WHERE " +
                    key_filter(source, plan.space, col, plan.range));
  }
  std::string sql = "SELECT k::text FROM (SELECT k, row_number() OVER (ORDER BY k) AS rn FROM (SELECT DISTINCT " +
                    route_expression(plan.space, "key") + " AS k FROM (" + join(parts, " UNION ALL ") +
                    ") u) d) x WHERE rn % " + std::to_string(batch_size) + " = 1 AND rn > 1 ORDER BY rn";
  routing::KeyType bound_type = catalog::bound_type(plan.space.kind, plan.space.key_type);
  std::vector<KeyRange> batches;
  std::optional<routing::Key> low = plan.range.low;
  for (auto& row : source.query(sql)) {
    routing::Key b = routing::parse_key(bound_type, row[0]);
    batches.push_back(KeyRange{low, b});
    low = b;
  }
  batches.push_back(KeyRange{low, plan.range.high});
  return batches;
}

}  // namespace

Plan Engine::plan_split(const SplitRequest& req) {
  if (req.batch_size < 1) throw usage_error("--batch-size must be at least 1");
  catalog::Store store(catalog_);
  Plan plan;
  plan.map = store.get_map(req.map);
  if (plan.map.kind == MapKind::list)
    throw usage_error("map " + req.map + " is a list map: split cuts ranges", "move a point with `shardctl move`");
  plan.space = RouteSpace{plan.map.kind, plan.map.key_type};
  routing::KeyType bound_type = catalog::bound_type(plan.map.kind, plan.map.key_type);
  routing::Key at = routing::parse_key(bound_type, req.at);
  plan.target = store.get_shard(req.to);

  auto mappings = store.list_mappings(req.map);
  auto holder = std::find_if(mappings.begin(), mappings.end(),
                             [&](const catalog::Mapping& m) { return routing::range_contains(m.range, at); });
  if (holder == mappings.end())
    throw usage_error("--at " + routing::format_key(at) + " is outside every mapping of map " + req.map,
                      "`shardctl map show " + req.map + "` shows the mapped ranges");
  plan.mapping = *holder;
  if (plan.mapping.range.low && routing::compare_keys(*plan.mapping.range.low, at) == 0)
    throw usage_error("--at " + routing::format_key(at) + " is where mapping " + routing::format_range(plan.mapping.range) +
                          " already starts: there is nothing to split",
                      "to move the whole mapping use `shardctl move`");
  plan.source = store.get_shard(plan.mapping.shard);
  plan.range = req.move_upper ? KeyRange{at, plan.mapping.range.high} : KeyRange{plan.mapping.range.low, at};

  std::vector<std::string> problems;
  if (plan.source.name == plan.target.name)
    problems.push_back("shard " + plan.target.name + " already holds " + routing::format_range(plan.range));
  if (plan.mapping.status != "online")
    problems.push_back("mapping " + routing::format_range(plan.mapping.range) + " is offline (an operation is moving it)");
  if (plan.source.status != "online") problems.push_back("source shard " + plan.source.name + " is " + plan.source.status);
  if (plan.target.status != "online") problems.push_back("target shard " + plan.target.name + " is " + plan.target.status);

  std::vector<catalog::TableDef> sharded;
  for (auto& t : store.list_tables()) {
    if (t.kind == "sharded" && t.map == req.map) sharded.push_back(t);
    if (t.kind == "reference") plan.references.push_back(catalog::quote_qualified(t.name));
  }
  if (sharded.empty())
    problems.push_back("map " + req.map + " has no sharded tables declared (`shardctl table add-sharded`)");
  if (!problems.empty()) throw usage_error("cannot split: " + join(problems, "; "));

  RawConn source(plan.source.dsn, "shard " + plan.source.name);
  RawConn target(plan.target.dsn, "shard " + plan.target.name);
  for (const auto& t : sharded) {
    std::string q = catalog::quote_qualified(t.name);
    auto src_cols = table_columns(source, q);
    auto dst_cols = table_columns(target, q);
    if (src_cols.empty()) {
      problems.push_back("table " + t.name + " is missing on source shard " + plan.source.name);
      continue;
    }
    if (dst_cols.empty()) {
      problems.push_back("table " + t.name + " is missing on target shard " + plan.target.name);
      continue;
    }
    auto key = [](const Column& c) { return c.name + " " + c.type; };
    std::set<std::string> a, b;
    for (const auto& c : src_cols) a.insert(key(c));
    for (const auto& c : dst_cols) b.insert(key(c));
    if (a != b) problems.push_back("table " + t.name + " has different columns on " + plan.source.name + " and " + plan.target.name);
    switch (key_index(source, q, *t.key_column)) {
      case KeyIndex::none:
        problems.push_back("table " + t.name + " has no primary key or unique index containing " + *t.key_column);
        break;
      case KeyIndex::non_leading:
        plan.warnings.push_back("the key index of " + t.name + " does not lead with " + *t.key_column + " (slower batches)");
        break;
      case KeyIndex::leading: break;
    }
    auto triggers = delete_triggers(source, q);
    if (!triggers.empty())
      problems.push_back("table " + t.name + " has DELETE trigger(s) " + join(triggers, ", ") + " on " +
                         plan.source.name + " that the purge of moved rows would fire");
    std::string col = catalog::quote_ident(*t.key_column);
    if (target.query("SELECT EXISTS (SELECT 1 FROM " + q + " WHERE " + key_filter(target, plan.space, col, plan.range) +
                     ")")[0][0] == "t")
      problems.push_back("the target range " + routing::format_range(plan.range) + " of " + t.name + " is not empty on " +
                         plan.target.name);
    plan.tables.push_back(describe_table(source, t));
  }
  // Reference tables are copied to the target only when empty there; a filled one is left
  // alone (it may be newer), with a warning.
  for (const auto& ref : plan.references) {
    if (table_columns(target, ref).empty())
      problems.push_back("reference table " + ref + " is missing on target shard " + plan.target.name);
    else if (target.query("SELECT EXISTS (SELECT 1 FROM " + ref + ")")[0][0] == "t")
      plan.warnings.push_back("reference table " + ref + " is not empty on " + plan.target.name + "; left as it is");
  }
  if (!problems.empty()) throw usage_error("cannot split: " + join(problems, "; "));
  // Parents before children for the copy; the purge runs in reverse.
  sort_by_foreign_keys(source, plan.tables);
  plan.batches = plan_batches(source, plan, req.batch_size);
  return plan;
}

}  // namespace shardctl::migrate
