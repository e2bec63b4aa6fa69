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
#include "migrate/raw_conn.hpp"

namespace shardctl::check {

struct ShardOutcome {
  std::vector<Finding> findings;
  std::vector<Unreachable> unreachable;
  std::vector<FixAction> fixes;
};

class ShardSweep {
 public:
  ShardSweep(const Fleet& fleet, const catalog::Shard& shard, const Options& options);
  // Throws an unavailable Error when the shard itself cannot be reached.
  ShardOutcome run();

 private:
  migrate::RawConn& conn();
  migrate::RawConn& fix_conn();
  // A connection to another shard for probes; nullptr (and noted as unreachable) when down.
  migrate::RawConn* probe_conn(const std::string& shard);
  bool present(migrate::RawConn& c, const std::string& table);

  void check_tables();
  void sweep_strays(const catalog::TableDef& table);
  void sweep_orphans(const catalog::Xref& xref);
  void sweep_guards();
  void fix_rows(const std::string& table, const std::string& quoted_table, const std::string& predicate,
                const std::vector<std::string>& params, const std::string& why);

  const Fleet& fleet_;
  const catalog::Shard& shard_;
  const Options& options_;
  std::unique_ptr<migrate::RawConn> conn_, fix_conn_;
  std::map<std::string, std::unique_ptr<migrate::RawConn>> probes_;
  std::set<std::string> down_;
  std::set<std::string> missing_;  // sharded tables absent here
  ShardOutcome out_;
};

// Sample keeping: the `limit` smallest keys (as text) seen, so the output is deterministic.
void keep_sample(std::vector<std::string>& samples, std::string key, int limit);

}  // namespace shardctl::check
