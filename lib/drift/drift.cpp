#include "drift/drift.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/error.hpp"
#include "drift/fingerprint.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/server_pool.hpp"

namespace shardctl::drift {

std::size_t Report::differing() const noexcept {
  return static_cast<std::size_t>(std::count_if(shards.begin(), shards.end(), [](const auto& s) { return !s.differences.empty(); }));
}

std::size_t Report::unreadable() const noexcept {
  return static_cast<std::size_t>(std::count_if(shards.begin(), shards.end(), [](const auto& s) { return !s.outcome.ok(); }));
}

int Report::exit_code() const noexcept {
  if (differing()) return 1;
  if (unreadable() || !compared) return 3;
  return 0;
}

std::string Report::basis() const {
  if (reference) return "reference shard " + *reference;
  std::size_t read = shards.size() - unreadable();
  return "the majority of " + std::to_string(read) + " shard(s)";
}

namespace {

// The first read compares some objects by a stand-in (a CHECK's expression tree, which names
// operators and types by oid). Where shards differ on such an object, every shard's stand-in
// for it is replaced by its deparsed definition and the shards are compared again: the report
// shows readable definitions, and an oid that differs only by creation order is no drift.
// Returns whether anything was replaced.
bool deparse_where_different(std::vector<Snapshot>& snapshots, const std::vector<ShardDrift>& drifts,
                             const std::vector<fanout::Target>& run, const std::vector<std::size_t>& of_snapshot,
                             const Options& options, shardio::ServerPool& pool) {
  std::set<std::string> keys;
  for (const auto& d : drifts)
    for (const auto& difference : d.differences) keys.insert(difference.key);
  std::vector<fanout::Target> targets;
  std::vector<std::size_t> of_target;
  for (std::size_t k = 0; k < snapshots.size(); ++k) {
    bool any = std::any_of(snapshots[k].objects.begin(), snapshots[k].objects.end(),
                           [&](const Object& o) { return !o.deparse_oid.empty() && keys.count(o.key); });
    if (!any) continue;
    targets.push_back(run[of_snapshot[k]]);
    of_target.push_back(k);
  }
  if (targets.empty()) return false;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t j = 0; j < targets.size(); ++j) index[targets[j].shard] = of_target[j];
  // A shard unreachable now keeps its stand-ins: the difference is still reported.
  fanout::run(targets, {options.parallel, false}, [&](const fanout::Target& t) {
    auto& objects = snapshots[index.at(t.shard)].objects;
    std::vector<Object*> pending;
    std::vector<std::string> oids;
    for (auto& o : objects)
      if (!o.deparse_oid.empty() && keys.count(o.key)) {
        pending.push_back(&o);
        oids.push_back(o.deparse_oid);
      }
    auto conn = pool.acquire(fanout::dsn_with_timeout(t.dsn, options.connect_timeout), "shard " + t.shard);
    auto definitions = read_definitions(*conn, oids, options.timeout);
    for (std::size_t j = 0; j < pending.size() && j < definitions.size(); ++j) {
      pending[j]->definition = std::move(definitions[j]);
      pending[j]->deparse_oid.clear();
    }
  });
  return true;
}

}  // namespace

Report run(catalog::Store& store, const Options& options) {
  auto targets = fanout::select_targets(store, options.selection);
  if (options.reference) {
    bool in = std::any_of(targets.run.begin(), targets.run.end(), [&](const auto& t) { return t.shard == *options.reference; });
    if (!in) {
      auto ref = fanout::select_targets(store, {std::nullopt, {*options.reference}});
      targets.run.insert(targets.run.end(), ref.run.begin(), ref.run.end());
      std::sort(targets.run.begin(), targets.run.end(), [](const auto& a, const auto& b) { return a.shard < b.shard; });
    }
  }
  Report report;
  report.reference = options.reference;
  report.offline = targets.offline;
  report.shards.resize(targets.run.size());
  std::vector<std::vector<Object>> objects(targets.run.size());
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < targets.run.size(); ++i) index[targets.run[i].shard] = i;

  // Every connection to the shards comes from one pool: at most --parallel per server.
  shardio::ServerPool pool(options.parallel);
  auto outcomes = fanout::run(targets.run, {options.parallel, false}, [&](const fanout::Target& t) {
    auto conn = pool.acquire(fanout::dsn_with_timeout(t.dsn, options.connect_timeout), "shard " + t.shard);
    objects[index.at(t.shard)] = without_ignored(read_objects(*conn, options.timeout), options.ignore);
  });

  std::vector<Snapshot> snapshots;
  std::vector<std::size_t> of_snapshot;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto& s = report.shards[i];
    s.outcome = outcomes[i];
    if (!s.outcome.ok()) continue;
    s.objects = objects[i].size();
    snapshots.push_back({s.outcome.shard, std::move(objects[i])});
    of_snapshot.push_back(i);
  }
  if (options.reference && std::none_of(snapshots.begin(), snapshots.end(), [&](const auto& s) { return s.shard == *options.reference; })) {
    report.compared = false;
    return report;
  }
  auto drifts = compare(snapshots, options.reference);
  if (deparse_where_different(snapshots, drifts, targets.run, of_snapshot, options, pool))
    drifts = compare(snapshots, options.reference);
  for (std::size_t k = 0; k < snapshots.size(); ++k) report.shards[of_snapshot[k]].fingerprint = fingerprint(snapshots[k].objects);
  for (std::size_t k = 0; k < drifts.size(); ++k) report.shards[of_snapshot[k]].differences = std::move(drifts[k].differences);
  return report;
}

}  // namespace shardctl::drift
