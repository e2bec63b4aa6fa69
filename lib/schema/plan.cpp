#include "schema/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace shardctl::schema {
namespace {

bool is_version_row(const HistoryRow& r) { return r.kind == "versioned" || r.kind == "baseline"; }

std::optional<Version> row_version(const HistoryRow& r) {
  if (!r.version) return std::nullopt;
  return parse_version(*r.version);
}

// The last successful baseline without files ("<baseline>" marker) covers every version up to
// its own; a baseline row written for a file covers only that file.
std::optional<Version> baseline_marker(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.success && r.kind == "baseline" && r.checksum.empty())
      if (auto v = row_version(r); v && (!out || *out < *v)) out = v;
  return out;
}

std::optional<Version> baseline_any(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.success && r.kind == "baseline")
      if (auto v = row_version(r); v && (!out || *out < *v)) out = v;
  return out;
}

// Identity of a history row's file for matching failures to later successes.
std::string row_key(const HistoryRow& r) {
  if (is_version_row(r)) {
    auto v = row_version(r);
    return "V:" + (v ? v->text() : *r.version);
  }
  return "R:" + r.name;
}

// The id of the last row of each file.
std::map<std::string, std::int64_t> last_ids(const std::vector<HistoryRow>& history) {
  std::map<std::string, std::int64_t> out;
  for (const auto& r : history) out[row_key(r)] = std::max(out[row_key(r)], r.id);
  return out;
}

// Failed rows with no later success of their file, and no later unfinished row (that is the
// file's state then).
std::vector<std::string> open_failures(const std::vector<HistoryRow>& history) {
  std::map<std::string, std::int64_t> last_success, last_unfinished;
  for (const auto& r : history) {
    if (r.success) last_success[row_key(r)] = std::max(last_success[row_key(r)], r.id);
    if (r.unfinished) last_unfinished[row_key(r)] = std::max(last_unfinished[row_key(r)], r.id);
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& r : history) {
    if (r.success || r.unfinished) continue;
    auto later = [&](const std::map<std::string, std::int64_t>& m) {
      auto it = m.find(row_key(r));
      return it != m.end() && it->second > r.id;
    };
    if (later(last_success) || later(last_unfinished)) continue;
    if (seen.insert(r.name).second) out.push_back(r.name);
  }
  return out;
}

// Unfinished rows that are the last row of their file.
std::vector<Started> open_started(const std::vector<HistoryRow>& history) {
  auto last = last_ids(history);
  std::vector<Started> out;
  for (const auto& r : history)
    if (r.unfinished && last[row_key(r)] == r.id) out.push_back({r.name, r.applied_at, r.applied_by});
  return out;
}

std::string migration_key(const Migration& m) {
  return m.kind == Kind::versioned ? "V:" + m.version->text() : "R:" + m.file;
}

}  // namespace

std::optional<Version> current_version(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.success && is_version_row(r))
      if (auto v = row_version(r); v && (!out || *out < *v)) out = v;
  return out;
}

ShardPlan plan_shard(const std::vector<Migration>& migrations, const std::vector<HistoryRow>& history) {
  ShardPlan plan;
  plan.current = current_version(history);
  plan.baseline = baseline_any(history);
  auto marker = baseline_marker(history);
  plan.failed = open_failures(history);
  plan.started = open_started(history);
  auto last = last_ids(history);
  std::set<std::string> started_keys;
  for (const auto& r : history)
    if (r.unfinished && last[row_key(r)] == r.id) started_keys.insert(row_key(r));

  // The last successful row per version, and per repeatable name.
  std::map<Version, const HistoryRow*> applied;
  std::map<std::string, const HistoryRow*> repeatable;
  for (const auto& r : history) {
    if (!r.success) continue;
    if (is_version_row(r)) {
      if (auto v = row_version(r)) {
        // A baseline marker says nothing about a file's checksum: it only covers versions.
        if (r.kind == "baseline" && r.checksum.empty()) continue;
        auto& slot = applied[*v];
        if (!slot || slot->id < r.id) slot = &r;
      }
    } else if (r.kind == "repeatable") {
      auto& slot = repeatable[r.name];
      if (!slot || slot->id < r.id) slot = &r;
    }
  }
  std::set<Version> in_dir;
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    const auto& m = migrations[i];
    if (m.kind == Kind::versioned) in_dir.insert(*m.version);
    if (started_keys.count(migration_key(m))) continue;  // in plan.started: never run again as is
    if (m.kind == Kind::versioned) {
      auto it = applied.find(*m.version);
      if (it != applied.end()) {
        if (!it->second->checksum.empty() && !m.matches(it->second->checksum))
          plan.changed.push_back({m.file, it->second->checksum, m.checksum});
        continue;
      }
      if (marker && !(*marker < *m.version)) continue;
      if (plan.current && *m.version < *plan.current) plan.out_of_order.push_back(m.file);
      plan.pending.push_back(i);
    } else {
      auto it = repeatable.find(m.file);
      if (it == repeatable.end() || !m.matches(it->second->checksum)) plan.pending.push_back(i);
    }
  }
  for (const auto& [v, row] : applied)
    if (!in_dir.count(v)) plan.unknown.push_back(row->name);
  return plan;
}

std::string file_state(const std::vector<HistoryRow>& history, const Migration& m, const HistoryRow** last) {
  const HistoryRow* found = nullptr;
  auto key = migration_key(m);
  for (const auto& r : history) {
    if (r.kind == "baseline" && r.checksum.empty()) continue;  // a marker names no file
    if (row_key(r) == key && (!found || found->id < r.id)) found = &r;
  }
  if (last) *last = found;
  if (found) return found->success ? "applied" : found->unfinished ? "started" : "failed";
  auto marker = baseline_marker(history);
  if (m.kind == Kind::versioned && marker && !(*marker < *m.version)) return "applied";
  return "not_run";
}

int StatusMatrix::exit_code() const {
  bool failed = false, unreachable = false, behind = false;
  for (const auto& r : rows) {
    if (r.state == "failed" || r.state == "interrupted" || r.state == "invalid_index") failed = true;
    else if (r.state == "unreachable") unreachable = true;
    else if (r.state != "current") behind = true;
  }
  if (failed) return 2;
  if (unreachable) return 3;
  return behind ? 1 : 0;
}

StatusMatrix status_against_directory(const std::vector<Migration>& migrations, const std::vector<ShardHistory>& shards) {
  StatusMatrix m;
  for (const auto& mig : migrations) {
    m.columns.push_back({mig.file, kind_name(mig.kind)});
    if (mig.kind == Kind::versioned) m.head = mig.version->text();
  }
  // Versions some shard applied that the directory lacks get columns of their own.
  std::map<Version, std::string> extra;
  std::vector<ShardPlan> plans(shards.size());
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].rows) continue;
    plans[s] = plan_shard(migrations, *shards[s].rows);
    for (const auto& r : *shards[s].rows)
      if (r.success && is_version_row(r) && std::find(plans[s].unknown.begin(), plans[s].unknown.end(), r.name) != plans[s].unknown.end())
        if (auto v = row_version(r)) extra.emplace(*v, r.name);
  }
  for (const auto& [v, name] : extra) m.columns.push_back({name, "versioned"});
  for (std::size_t s = 0; s < shards.size(); ++s) {
    StatusRow row;
    row.shard = shards[s].shard;
    if (!shards[s].rows) {
      row.state = "unreachable";
      row.error = shards[s].error;
      m.rows.push_back(std::move(row));
      continue;
    }
    const auto& plan = plans[s];
    const auto& hist = *shards[s].rows;
    if (plan.current) row.version = plan.current->text();
    auto failed = [&](const std::string& f) { return std::find(plan.failed.begin(), plan.failed.end(), f) != plan.failed.end(); };
    auto pending = [&](std::size_t i) { return std::find(plan.pending.begin(), plan.pending.end(), i) != plan.pending.end(); };
    auto started = [&](const std::string& f) {
      return std::any_of(plan.started.begin(), plan.started.end(), [&](const Started& st) { return st.file == f; });
    };
    auto invalid = [&](const std::string& f) {
      return std::any_of(shards[s].invalid_indexes.begin(), shards[s].invalid_indexes.end(),
                         [&](const InvalidIndex& ix) { return ix.file == f; });
    };
    row.started = plan.started;
    row.invalid_indexes = shards[s].invalid_indexes;
    for (std::size_t i = 0; i < migrations.size(); ++i) {
      const auto& mig = migrations[i];
      std::string cell = "ok";
      bool changed = std::any_of(plan.changed.begin(), plan.changed.end(), [&](const Changed& c) { return c.file == mig.file; });
      if (started(mig.file)) cell = "started";
      else if (failed(mig.file)) cell = "failed";
      else if (changed) cell = "changed";
      else if (pending(i)) cell = "pending";
      else if (mig.kind == Kind::versioned) {
        bool own_row = std::any_of(hist.begin(), hist.end(), [&](const HistoryRow& r) {
          return r.success && r.kind == "versioned" && row_version(r) == mig.version;
        });
        if (!own_row) cell = "baseline";
      }
      if (cell == "ok" && invalid(mig.file)) cell = "invalid";
      row.cells.push_back(cell);
    }
    for (const auto& [v, name] : extra)
      row.cells.push_back(std::find(plan.unknown.begin(), plan.unknown.end(), name) != plan.unknown.end() ? "ok" : "");
    if (!plan.failed.empty()) row.state = "failed";
    // A file at work (started, the lock held) is building its index, which is INVALID meanwhile.
    else if (!plan.started.empty()) row.state = shards[s].lock_held ? "running" : "interrupted";
    else if (!row.invalid_indexes.empty()) row.state = "invalid_index";
    else if (!plan.changed.empty()) row.state = "changed";
    else if (!plan.pending.empty()) row.state = "pending";
    else if (!plan.unknown.empty()) row.state = "different";
    else row.state = "current";
    m.rows.push_back(std::move(row));
  }
  return m;
}

StatusMatrix status_between_shards(const std::vector<ShardHistory>& shards) {
  StatusMatrix m;
  // Every version any shard applied, with the file name it was applied from.
  std::map<Version, std::string> versions;
  std::map<std::string, std::set<std::string>> repeatable_sums;  // name -> checksums seen
  for (const auto& s : shards) {
    if (!s.rows) continue;
    for (const auto& r : *s.rows) {
      if (!r.success) continue;
      if (is_version_row(r)) {
        if (auto v = row_version(r)) versions.emplace(*v, r.kind == "baseline" && r.checksum.empty() ? "V" + v->text() + " (baseline)" : r.name);
      }
    }
  }
  // The last checksum of each repeatable file per shard: shards differ when those differ.
  std::vector<std::map<std::string, std::string>> last_r(shards.size());
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].rows) continue;
    std::map<std::string, std::int64_t> ids;
    for (const auto& r : *shards[s].rows)
      if (r.success && r.kind == "repeatable" && r.id >= ids[r.name]) {
        ids[r.name] = r.id;
        last_r[s][r.name] = r.checksum;
      }
    for (const auto& [name, sum] : last_r[s]) repeatable_sums[name].insert(sum);
  }
  for (const auto& [v, name] : versions) m.columns.push_back({name, "versioned"});
  for (const auto& [name, sums] : repeatable_sums) m.columns.push_back({name, "repeatable"});
  // A file that failed (or never finished) everywhere it ran has no successful row: it still
  // gets a column.
  std::vector<std::string> failed_only;
  for (const auto& s : shards) {
    if (!s.rows) continue;
    auto files = open_failures(*s.rows);
    for (const auto& st : open_started(*s.rows)) files.push_back(st.file);
    for (const auto& f : files)
      if (std::none_of(m.columns.begin(), m.columns.end(), [&](const StatusColumn& c) { return c.label == f; }) &&
          std::find(failed_only.begin(), failed_only.end(), f) == failed_only.end())
        failed_only.push_back(f);
  }
  for (const auto& f : failed_only) m.columns.push_back({f, f.rfind("R__", 0) == 0 ? "repeatable" : "versioned"});
  if (!versions.empty()) m.head = versions.rbegin()->first.text();
  for (std::size_t s = 0; s < shards.size(); ++s) {
    StatusRow row;
    row.shard = shards[s].shard;
    if (!shards[s].rows) {
      row.state = "unreachable";
      row.error = shards[s].error;
      m.rows.push_back(std::move(row));
      continue;
    }
    const auto& hist = *shards[s].rows;
    auto cur = current_version(hist);
    if (cur) row.version = cur->text();
    auto marker = baseline_marker(hist);
    bool behind = false;
    for (const auto& [v, name] : versions) {
      bool own = std::any_of(hist.begin(), hist.end(), [&](const HistoryRow& r) {
        return r.success && is_version_row(r) && row_version(r) == v;
      });
      std::string cell = own ? "ok" : (marker && !(*marker < v)) ? "baseline" : "pending";
      if (cell == "pending") behind = true;
      row.cells.push_back(cell);
    }
    bool differs = false;
    for (const auto& [name, sums] : repeatable_sums) {
      auto it = last_r[s].find(name);
      if (it == last_r[s].end()) {
        row.cells.push_back("pending");
        differs = true;
      } else if (sums.size() > 1) {
        row.cells.push_back(it->second.substr(0, 7 + 12));  // "sha256:" + 12 hex digits
        differs = true;
      } else {
        row.cells.push_back("ok");
      }
    }
    for (std::size_t k = 0; k < failed_only.size(); ++k) row.cells.push_back("");
    auto failures = open_failures(hist);
    for (const auto& f : failures)
      for (std::size_t c = 0; c < m.columns.size(); ++c)
        if (m.columns[c].label == f) row.cells[c] = "failed";
    row.started = open_started(hist);
    for (const auto& st : row.started)
      for (std::size_t c = 0; c < m.columns.size(); ++c)
        if (m.columns[c].label == st.file) row.cells[c] = "started";
    row.invalid_indexes = shards[s].invalid_indexes;
    if (!failures.empty()) row.state = "failed";
    else if (!row.started.empty()) row.state = shards[s].lock_held ? "running" : "interrupted";
    else if (!row.invalid_indexes.empty()) row.state = "invalid_index";
    else if (behind) row.state = "pending";
    else if (differs) row.state = "different";
    else row.state = "current";
    m.rows.push_back(std::move(row));
  }
  return m;
}

}  // namespace shardctl::schema
