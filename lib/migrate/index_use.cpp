// Whether batch statements can use an index: the planner is asked (EXPLAIN, sequential scans
// disabled) how it would run a narrow batch filter. If it still reads a whole table, no index
// serves the filter, and every batch of the move would scan that table.
// Also whether a batch's read can stream in primary-key order (index_use.hpp).
#include "migrate/index_use.hpp"

#include <nlohmann/json.hpp>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/preconditions.hpp"

namespace shardctl::migrate {
using routing::KeyType;
using routing::MapKind;

namespace {

// Whether `node` of an EXPLAIN (FORMAT JSON) plan, or any node below it, satisfies `is`.
template <typename Is>
bool any_node(const nlohmann::json& node, const Is& is) {
  if (is(node, node.value("Node Type", ""))) return true;
  if (node.contains("Plans"))
    for (const auto& child : node["Plans"])
      if (any_node(child, is)) return true;
  return false;
}

// A scan that reads a whole relation: a Seq Scan, or an index scan with no index condition
// (a walk over the whole index, filtering rows; with sequential scans off the planner picks
// that, or a condition-less Bitmap Index Scan, rather than admit it has no index).
bool scans_whole(const nlohmann::json& plan) {
  return any_node(plan, [](const nlohmann::json& node, const std::string& type) {
    return type == "Seq Scan" ||
           ((type == "Index Scan" || type == "Index Only Scan" || type == "Bitmap Index Scan") && !node.contains("Index Cond"));
  });
}

// Whether the plan sorts anywhere.
bool sorts(const nlohmann::json& plan) {
  return any_node(plan, [](const nlohmann::json&, const std::string& type) { return type == "Sort" || type == "Incremental Sort"; });
}

// A narrow range of the kind batches use: one key (or hash value) wide, from the operation's
// range when it has a lower bound. Any narrow range gives the same plan shape.
routing::KeyRange sample_range(const Plan& plan) {
  routing::KeyType bound = catalog::bound_type(plan.space.kind, plan.space.key_type);
  routing::Key k;
  if (plan.range.low) k = *plan.range.low;
  else if (bound == KeyType::text) k = routing::parse_key(bound, "m");
  else if (bound == KeyType::uuid) k = routing::parse_key(bound, "80000000-0000-0000-0000-000000000000");
  else k = routing::parse_key(bound, "0");
  return routing::point_range(bound, k);
}

// The index that serves batch filters of this map over the table's key column.
std::string index_for(const Plan& plan, const PlannedTable& t) {
  std::string expr = shardio::key_expression(plan.space, shardio::KeyColumn{catalog::quote_ident(t.key_column), t.key_own_collation});
  // Built by appending: GCC 12 warns (-Wrestrict, wrongly) on "(" + std::string&&.
  std::string out = "CREATE INDEX ON ";
  out.append(t.quoted).append(" (");
  // A hash is an expression and takes parentheses of its own; a column, under COLLATE "C" or
  // not, is a plain index element.
  if (plan.space.kind == MapKind::hash) out.append("(").append(expr).append(")");
  else out.append(expr);
  return out.append(")");
}

}  // namespace

void check_index_use(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan, std::vector<std::string>& problems) {
  routing::KeyRange range = sample_range(plan);
  for (const auto& t : plan.tables) {
    std::string filter = shardio::key_filter(shard, plan.space, shardio::KeyColumn{catalog::quote_ident(t.key_column), t.key_own_collation}, range);
    std::string json;
    shardio::in_rolled_back_transaction(shard, [&] {
      shard.exec("SET LOCAL enable_seqscan = off");
      json = shard.query("EXPLAIN (FORMAT JSON) SELECT 1 FROM " + t.quoted + " WHERE " + filter)[0][0];
    });
    auto plan_json = nlohmann::json::parse(json);
    if (scans_whole(plan_json.at(0).at("Plan")))
      problems.push_back("no index on " + shard_name + " serves the batch filter of " + t.name +
                         " (every batch would scan the whole table): `" + index_for(plan, t) + "`");
  }
}

// On a heap whose rows arrived over time, the planner reads a batch by a bitmap scan and sorts
// it (in temporary files past work_mem): the first row leaves only when the sort ends, and the
// target loads nothing until then, so the copy costs the read plus the load. Through the
// primary key's index the rows leave as they are found, and the two overlap: the copy of a
// scattered heap took about a fifth less (bench/README.md, "moves on a scattered heap"). A plan that
// still sorts, or walks a whole index (a primary key that does not lead with the key column),
// keeps sorts on.
bool streams_in_order_without_sort(shardio::RawConn& source, const std::string& select) {
  std::string json;
  {
    SortsOff off(source);
    json = source.query("EXPLAIN (FORMAT JSON) " + select)[0][0];
  }
  auto doc = nlohmann::json::parse(json);
  const auto& plan = doc.at(0).at("Plan");
  return !sorts(plan) && !scans_whole(plan);
}

SortsOff::SortsOff(shardio::RawConn& conn) : conn_(conn) { conn_.exec("SET enable_sort = off"); }

SortsOff::~SortsOff() {
  try {
    conn_.exec("RESET enable_sort");
  } catch (...) {  // a failed transaction's ROLLBACK undoes the SET; a lost session keeps nothing
  }
}

}  // namespace shardctl::migrate
