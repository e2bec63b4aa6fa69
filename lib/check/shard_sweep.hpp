// The work of one sweep thread on one shard: strays per sharded table, orphans per xref
// (within the shard by one anti-join, across shards by streamed keys probed in batches on the
// parent's shard), and the shard side of map consistency (guards and replication objects left
// behind, missing tables).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "check/catalog_view.hpp"
#include "check/check.hpp"
#include "check/fleet.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/server_pool.hpp"
#include "shardside/guard.hpp"

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
  // `views`: the catalog the run's sweeps share, re-read before and after each pass (its views
  // are the same object while the catalog has not changed). `initial`: the run's first read of
  // the catalog, whose exclusions every pass keeps. Every connection to a shard comes from
  // `pool`: this shard's for the whole sweep, another one to it for each fix batch, and one to
  // another shard for each probe round trip, each given back before the next is taken (so that
  // the run's sweeps, --parallel of them on a pool of --parallel + 1 per server, always leave
  // one of them room to go on: shardctl-check(1), CONNECTIONS).
  ShardSweep(const catalog::Shard& shard, const Options& options, std::shared_ptr<const Fleet> initial,
             CatalogViews& views, shardio::ServerPool& pool);
  // Throws an unavailable Error when the shard itself cannot be reached.
  ShardOutcome run();

 private:
  shardio::RawConn& conn();
  // A connection to another shard for one probe; none (and noted as unreachable) when down.
  std::optional<shardio::ServerPool::Lease> probe_conn(const std::string& shard);
  bool present(shardio::RawConn& c, const std::string& table);

  void check_tables();
  void sweep_strays(const catalog::TableDef& table);

  // One xref's orphans (shard_sweep.cpp says how): the steps of sweep_orphans.
  struct KeyBatch;
  struct OrphanScan;
  void sweep_orphans(const catalog::Xref& xref);
  OrphanScan start_orphan_scan(shardio::RawConn& c, const catalog::Xref& xref);
  void orphans_within(shardio::RawConn& c, OrphanScan& scan);
  void prepare_probes(shardio::RawConn& c, OrphanScan& scan);
  void orphans_across(shardio::RawConn& c, OrphanScan& scan);
  void route_keys(OrphanScan& scan, const std::vector<std::vector<std::string>>& rows,
                  std::map<std::string, KeyBatch>& pending, KeyBatch& unrouted);
  void probe_parents(OrphanScan& scan, const std::string& target, KeyBatch& batch);
  void record_orphans(OrphanScan& scan, const std::vector<std::vector<std::string>>& orphan_columns,
                      std::int64_t& counter, const std::string& why);
  void report_orphans(OrphanScan& scan);

  // Guard ranges and triggers left over on this shard: the steps of sweep_guards.
  void sweep_guards();
  void leftover_ranges(const std::vector<shardside::GuardRange>& ranges);
  void leftover_triggers(shardio::RawConn& c, const std::set<std::string>& guarded_maps);
  // shardctl replication objects here whose operation is over or unknown.
  void sweep_replication();
  void sweep_pass();
  // "NOT (keys of operations in flight)" for a column routed by `map`, or "true".
  std::string settled(shardio::RawConn& c, const std::string& map, const std::string& quoted_column);
  // Re-reads the catalog; throws ViewMoved when it no longer matches this pass's view.
  void recheck_view();
  // The catalog now, with the exclusions of `earlier` kept (carry_exclusions).
  std::shared_ptr<const Fleet> read_view(const std::shared_ptr<const Fleet>& earlier);
  void fix_rows(const std::string& table, const std::string& quoted_table, const std::string& predicate,
                const std::vector<std::string>& params, const std::string& why);

  const catalog::Shard& shard_;
  const Options& options_;
  std::shared_ptr<const Fleet> initial_;
  CatalogViews& views_;
  shardio::ServerPool& pool_;
  std::shared_ptr<const Fleet> view_;  // this pass's view of the catalog
  std::optional<shardio::ServerPool::Lease> conn_;
  std::set<std::string> down_;
  std::set<std::string> missing_;  // sharded tables absent here
  std::map<std::pair<std::string, std::string>, std::string> anywhere_;  // (map, key column) -> routed anywhere, this pass
  ShardOutcome out_;
};

// Sample keeping: the `limit` smallest keys (as text) seen, so the output is deterministic.
void keep_sample(std::vector<std::string>& samples, std::string key, int limit);

}  // namespace shardctl::check
