#include "fanout/fanout.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "core/parallel.hpp"
#include "core/words.hpp"
#include "pg/dsn.hpp"

namespace shardctl::fanout {

namespace {

std::string first_line(const std::string& text) {
  auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

// Runs one target's work and turns whatever it throws into the target's outcome.
Outcome run_one(const Target& t, const Work& work) {
  Outcome o;
  o.shard = t.shard;
  auto start = std::chrono::steady_clock::now();
  try {
    work(t);
    o.state = State::ok;
  } catch (const Error& e) {
    o.state = refused_for_connections(e)           ? State::refused
              : e.kind() == ErrorKind::unavailable ? State::unreachable
                                                   : State::failed;
    o.kind = e.kind();
    o.error = first_line(e.what());
    o.hint = e.hint();
  } catch (const std::exception& e) {
    o.state = State::failed;
    o.kind = ErrorKind::internal;
    o.error = first_line(e.what());
  }
  o.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  return o;
}

}  // namespace

std::vector<std::string> split_shard_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    auto part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto b = part.find_first_not_of(" \t");
    auto e = part.find_last_not_of(" \t");
    if (b == std::string::npos) throw usage_error("--shards '" + text + "' holds an empty shard name", "write e.g. --shards shard_1,shard_2");
    out.push_back(part.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Targets select_targets(catalog::Store& store, const Selection& selection) {
  auto shards = store.list_shards();
  std::set<std::string> of_map;
  if (selection.map) {
    store.get_map(*selection.map);  // usage Error when unknown
    for (const auto& m : store.list_mappings(*selection.map)) of_map.insert(m.shard);
  }
  for (const auto& name : selection.shards) {
    auto it = std::find_if(shards.begin(), shards.end(), [&](const auto& s) { return s.name == name; });
    if (it == shards.end()) throw usage_error("unknown shard '" + name + "'", "`shardctl shard list` shows the shards");
    if (selection.map && !of_map.count(name))
      throw usage_error("shard '" + name + "' holds no mapping of map '" + *selection.map + "'");
  }
  std::sort(shards.begin(), shards.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  Targets out;
  for (const auto& s : shards) {
    bool named = std::find(selection.shards.begin(), selection.shards.end(), s.name) != selection.shards.end();
    if (!selection.shards.empty() && !named) continue;
    if (selection.map && !of_map.count(s.name)) continue;
    if (s.status == catalog::ShardStatus::offline && !named) {
      out.offline.push_back(s.name);
      continue;
    }
    out.run.push_back({s.name, s.dsn, s.status});
  }
  return out;
}

std::vector<Outcome> run(const std::vector<Target>& targets, const Policy& policy, const Work& work, const Done& on_done) {
  std::vector<Outcome> outcomes(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) outcomes[i].shard = targets[i].shard;
  std::atomic<bool> stopped{false};
  std::mutex done_mutex;  // on_done is never called twice at once
  auto report = [&](std::size_t i) {
    if (!on_done) return;
    std::lock_guard lock(done_mutex);
    on_done(targets[i], outcomes[i]);
  };
  parallel_for(targets.size(), policy.parallel, [&](std::size_t i) {
    if (stopped.load()) {
      report(i);  // skipped: a failure elsewhere stopped the run before this shard began
      return;
    }
    outcomes[i] = run_one(targets[i], work);
    if (!outcomes[i].ok() && policy.stop_on_failure) stopped.store(true);
    report(i);
  });
  return outcomes;
}

std::string dsn_with_timeout(const std::string& dsn, int seconds) {
  // libpq keeps the last value of a repeated keyword, so the appended one wins.
  return pg::normalize_dsn(dsn) + " connect_timeout=" + std::to_string(std::max(1, seconds));
}

}  // namespace shardctl::fanout
