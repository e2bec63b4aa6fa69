#include "drift/drift.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "drift/fingerprint.hpp"
#include "shardio/raw_conn.hpp"

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

  auto outcomes = fanout::run(targets.run, {options.parallel, false}, [&](const fanout::Target& t) {
    shardio::RawConn conn(fanout::dsn_with_timeout(t.dsn, options.connect_timeout), "shard " + t.shard);
    objects[index.at(t.shard)] = without_ignored(read_objects(conn, options.timeout), options.ignore);
  });

  std::vector<Snapshot> snapshots;
  std::vector<std::size_t> of_snapshot;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto& s = report.shards[i];
    s.outcome = outcomes[i];
    if (!s.outcome.ok()) continue;
    s.objects = objects[i].size();
    s.fingerprint = fingerprint(objects[i]);
    snapshots.push_back({s.outcome.shard, std::move(objects[i])});
    of_snapshot.push_back(i);
  }
  if (options.reference && std::none_of(snapshots.begin(), snapshots.end(), [&](const auto& s) { return s.shard == *options.reference; })) {
    report.compared = false;
    return report;
  }
  auto drifts = compare(snapshots, options.reference);
  for (std::size_t k = 0; k < drifts.size(); ++k) report.shards[of_snapshot[k]].differences = std::move(drifts[k].differences);
  return report;
}

}  // namespace shardctl::drift
