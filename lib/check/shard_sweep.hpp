// The work of one sweep thread on one shard: strays per sharded table, orphans per xref
// (within the shard by one anti-join, across shards by streamed keys probed in batches on the
// parent's shard), and the shard side of map consistency (guards left behind, missing tables).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "check/check.hpp"
#include "check/fleet.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::check {

struct ShardOutcome {
  std::vector<Finding> findings;
  std::vector<Unreachable> unreachable;
  std::vector<Unreachable> undetermined;
  std::vector<FixAction> fixes;
};

// Passes over one shard before its results are given up as not determined.
inline constexpr int max_sweep_passes = 3;

class ShardSweep {
 public:
  // `since`: the catalog time the check began (catalog_now). The sweep opens its own catalog
  // connection (options.catalog_dsn) and re-reads the catalog per pass (load_fleet).
  // `initial`: the run's first read of the catalog, whose exclusions every pass keeps.
  ShardSweep(const catalog::Shard& shard, const Options& options, std::string since, const Fleet& initial);
  // Throws an unavailable Error when the shard itself cannot be reached.
  ShardOutcome run();

 private:
  shardio::RawConn& conn();
  shardio::RawConn& fix_conn();
  // A connection to another shard for probes; nullptr (and noted as unreachable) when down.
  shardio::RawConn* probe_conn(const std::string& shard);
  bool present(shardio::RawConn& c, const std::string& table);

  void check_tables();
  void sweep_strays(const catalog::TableDef& table);
  void sweep_orphans(const catalog::Xref& xref);
  void sweep_guards();
  void sweep_pass();
  // "NOT (keys of operations in flight)" for a column routed by `map`, or "true".
  std::string settled(shardio::RawConn& c, const std::string& map, const std::string& quoted_column);
  // Re-reads the catalog; throws ViewMoved when it no longer matches this pass's view.
  void recheck_view();
  Fleet read_view(const Fleet& earlier);
  void fix_rows(const std::string& table, const std::string& quoted_table, const std::string& predicate,
                const std::vector<std::string>& params, const std::string& why);

  const catalog::Shard& shard_;
  const Options& options_;
  std::string since_;
  const Fleet& initial_;
  std::unique_ptr<pg::Connection> catalog_;
  Fleet fleet_;  // this pass's view of the catalog
  std::unique_ptr<shardio::RawConn> conn_, fix_conn_;
  std::map<std::string, std::unique_ptr<shardio::RawConn>> probes_;
  std::set<std::string> down_;
  std::set<std::string> missing_;  // sharded tables absent here
  ShardOutcome out_;
};

// Sample keeping: the `limit` smallest keys (as text) seen, so the output is deterministic.
void keep_sample(std::vector<std::string>& samples, std::string key, int limit);

}  // namespace shardctl::check
