#include "schema/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace shardctl::schema {
namespace {

using shardside::SchemaHistoryKind;

bool is_version_row(const HistoryRow& r) {
  return r.kind == SchemaHistoryKind::versioned || r.kind == SchemaHistoryKind::baseline;
}

std::optional<Version> row_version(const HistoryRow& r) {
  if (!r.version) return std::nullopt;
  return parse_version(*r.version);
}

// The last successful baseline without files ("<baseline>" marker) covers every version up to
// its own; a baseline row written for a file covers only that file.
std::optional<Version> baseline_marker(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.succeeded() && r.baseline_marker())
      if (auto v = row_version(r); v && (!out || *out < *v)) out = v;
  return out;
}

std::optional<Version> baseline_any(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.succeeded() && r.kind == SchemaHistoryKind::baseline)
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
    if (r.succeeded()) last_success[row_key(r)] = std::max(last_success[row_key(r)], r.id);
    if (r.unfinished()) last_unfinished[row_key(r)] = std::max(last_unfinished[row_key(r)], r.id);
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& r : history) {
    if (r.succeeded() || r.unfinished()) continue;
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
    if (r.unfinished() && last[row_key(r)] == r.id) out.push_back({r.name, r.applied_at, r.applied_by});
  return out;
}

std::string migration_key(const Migration& m) {
  return m.kind == Kind::versioned ? "V:" + m.version->text() : "R:" + m.file;
}

}  // namespace

std::optional<Version> current_version(const std::vector<HistoryRow>& history) {
  std::optional<Version> out;
  for (const auto& r : history)
    if (r.succeeded() && is_version_row(r))
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
    if (r.unfinished() && last[row_key(r)] == r.id) started_keys.insert(row_key(r));

  // The last successful row per version, and per repeatable name.
  std::map<Version, const HistoryRow*> applied;
  std::map<std::string, const HistoryRow*> repeatable;
  for (const auto& r : history) {
    if (!r.succeeded()) continue;
    if (is_version_row(r)) {
      if (auto v = row_version(r)) {
        // A baseline marker says nothing about a file's checksum: it only covers versions.
        if (r.baseline_marker()) continue;
        auto& slot = applied[*v];
        if (!slot || slot->id < r.id) slot = &r;
      }
    } else if (r.kind == SchemaHistoryKind::repeatable) {
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

RecordedState file_state(const std::vector<HistoryRow>& history, const Migration& m, const HistoryRow** last) {
  const HistoryRow* found = nullptr;
  auto key = migration_key(m);
  for (const auto& r : history) {
    if (r.baseline_marker()) continue;  // a marker names no file
    if (row_key(r) == key && (!found || found->id < r.id)) found = &r;
  }
  if (last) *last = found;
  if (found) return found->succeeded() ? RecordedState::applied : found->unfinished() ? RecordedState::started : RecordedState::failed;
  auto marker = baseline_marker(history);
  if (m.kind == Kind::versioned && marker && !(*marker < *m.version)) return RecordedState::applied;
  return RecordedState::not_run;
}

int StatusMatrix::exit_code() const {
  bool failed = false, unreachable = false, behind = false;
  for (const auto& r : rows) {
    switch (r.state) {
      case StatusState::failed:
      case StatusState::interrupted:
      case StatusState::invalid_index: failed = true; break;
      case StatusState::unreachable:
      case StatusState::refused: unreachable = true; break;
      case StatusState::current: break;
      case StatusState::pending:
      case StatusState::running:
      case StatusState::changed:
      case StatusState::different: behind = true; break;
    }
  }
  if (failed) return 2;
  if (unreachable) return 3;
  return behind ? 1 : 0;
}

namespace {

template <class Container, class Value>
bool contains(const Container& c, const Value& v) {
  return std::find(c.begin(), c.end(), v) != c.end();
}

bool names_file(const std::vector<Started>& started, const std::string& file) {
  return std::any_of(started.begin(), started.end(), [&](const Started& st) { return st.file == file; });
}

StatusRow unreachable_row(const ShardHistory& shard) {
  StatusRow row;
  row.shard = shard.shard;
  row.state = shard.refused ? StatusState::refused : StatusState::unreachable;
  row.error = shard.error;
  return row;
}

// Against a directory: versions some shard applied that the directory lacks, with the file
// name they were applied from (they get columns of their own).
std::map<Version, std::string> unknown_versions(const std::vector<ShardHistory>& shards, const std::vector<ShardPlan>& plans) {
  std::map<Version, std::string> out;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].rows) continue;
    for (const auto& r : *shards[s].rows)
      if (r.succeeded() && is_version_row(r) && contains(plans[s].unknown, r.name))
        if (auto v = row_version(r)) out.emplace(*v, r.name);
  }
  return out;
}

// Against a directory: the cell of file `i`, what stops or awaits it first, else ok (baseline
// when only a baseline covers it); ok with an INVALID index of the file is invalid.
Cell directory_cell(const std::vector<Migration>& migrations, std::size_t i, const ShardHistory& shard, const ShardPlan& plan) {
  const auto& mig = migrations[i];
  const auto& hist = *shard.rows;
  auto cell = CellState::ok;
  if (names_file(plan.started, mig.file)) cell = CellState::started;
  else if (contains(plan.failed, mig.file)) cell = CellState::failed;
  else if (std::any_of(plan.changed.begin(), plan.changed.end(), [&](const Changed& c) { return c.file == mig.file; }))
    cell = CellState::changed;
  else if (contains(plan.pending, i)) cell = CellState::pending;
  else if (mig.kind == Kind::versioned) {
    bool own_row = std::any_of(hist.begin(), hist.end(), [&](const HistoryRow& r) {
      return r.succeeded() && r.kind == SchemaHistoryKind::versioned && row_version(r) == mig.version;
    });
    if (!own_row) cell = CellState::baseline;
  }
  bool invalid = std::any_of(shard.invalid_indexes.begin(), shard.invalid_indexes.end(),
                             [&](const InvalidIndex& ix) { return ix.file == mig.file; });
  if (cell == CellState::ok && invalid) cell = CellState::invalid;
  return {cell};
}

// Against a directory: the shard's state, the most pressing first.
StatusState directory_state(const ShardHistory& shard, const ShardPlan& plan) {
  if (!plan.failed.empty()) return StatusState::failed;
  // A file at work (started, the lock held) is building its index, which is INVALID meanwhile.
  if (!plan.started.empty()) return shard.lock_held ? StatusState::running : StatusState::interrupted;
  if (!shard.invalid_indexes.empty()) return StatusState::invalid_index;
  if (!plan.changed.empty()) return StatusState::changed;
  if (!plan.pending.empty()) return StatusState::pending;
  if (!plan.unknown.empty()) return StatusState::different;
  return StatusState::current;
}

StatusRow directory_row(const std::vector<Migration>& migrations, const std::map<Version, std::string>& unknown,
                        const ShardHistory& shard, const ShardPlan& plan) {
  StatusRow row;
  row.shard = shard.shard;
  if (plan.current) row.version = plan.current->text();
  row.started = plan.started;
  row.invalid_indexes = shard.invalid_indexes;
  for (std::size_t i = 0; i < migrations.size(); ++i) row.cells.push_back(directory_cell(migrations, i, shard, plan));
  for (const auto& [v, name] : unknown) row.cells.push_back({contains(plan.unknown, name) ? CellState::ok : CellState::none});
  row.state = directory_state(shard, plan);
  return row;
}

// Between shards: every version any shard applied, with the file name it was applied from.
std::map<Version, std::string> versions_applied(const std::vector<ShardHistory>& shards) {
  std::map<Version, std::string> out;
  for (const auto& s : shards) {
    if (!s.rows) continue;
    for (const auto& r : *s.rows)
      if (r.succeeded() && is_version_row(r))
        if (auto v = row_version(r)) out.emplace(*v, r.baseline_marker() ? "V" + v->text() + " (baseline)" : r.name);
  }
  return out;
}

// Between shards: per shard, the last checksum of each repeatable file (name -> checksum).
std::vector<std::map<std::string, std::string>> last_repeatable_checksums(const std::vector<ShardHistory>& shards) {
  std::vector<std::map<std::string, std::string>> out(shards.size());
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].rows) continue;
    std::map<std::string, std::int64_t> ids;
    for (const auto& r : *shards[s].rows)
      if (r.succeeded() && r.kind == SchemaHistoryKind::repeatable && r.id >= ids[r.name]) {
        ids[r.name] = r.id;
        out[s][r.name] = r.checksum;
      }
  }
  return out;
}

// Between shards: files that failed (or never finished) everywhere they ran have no successful
// row, and no column yet: they still get one.
std::vector<std::string> files_without_success(const std::vector<ShardHistory>& shards, const std::vector<StatusColumn>& columns) {
  std::vector<std::string> out;
  for (const auto& s : shards) {
    if (!s.rows) continue;
    auto files = open_failures(*s.rows);
    for (const auto& st : open_started(*s.rows)) files.push_back(st.file);
    for (const auto& f : files)
      if (std::none_of(columns.begin(), columns.end(), [&](const StatusColumn& c) { return c.label == f; }) && !contains(out, f))
        out.push_back(f);
  }
  return out;
}

// Between shards: the shard's row. Versions: ok (its own row), baseline (covered by a baseline
// marker) or pending; repeatable files: ok, pending, or its checksum where shards differ; then
// a file whose last attempt failed or never finished is marked so in its column.
StatusRow between_row(const ShardHistory& shard, const std::vector<StatusColumn>& columns,
                      const std::map<Version, std::string>& versions,
                      const std::map<std::string, std::set<std::string>>& repeatable_sums,
                      const std::map<std::string, std::string>& last_sums) {
  const auto& hist = *shard.rows;
  StatusRow row;
  row.shard = shard.shard;
  if (auto cur = current_version(hist)) row.version = cur->text();
  auto marker = baseline_marker(hist);
  for (const auto& [v, name] : versions) {
    bool own = std::any_of(hist.begin(), hist.end(), [&](const HistoryRow& r) {
      return r.succeeded() && is_version_row(r) && row_version(r) == v;
    });
    row.cells.push_back({own ? CellState::ok : (marker && !(*marker < v)) ? CellState::baseline : CellState::pending});
  }
  for (const auto& [name, sums] : repeatable_sums) {
    auto it = last_sums.find(name);
    if (it == last_sums.end()) row.cells.push_back({CellState::pending});
    else if (sums.size() > 1) row.cells.push_back({CellState::differs, it->second.substr(0, 7 + 12)});  // "sha256:" + 12 hex digits
    else row.cells.push_back({CellState::ok});
  }
  auto at = [&](CellState c) { return [c](const Cell& cell) { return cell.state == c; }; };
  auto versions_end = row.cells.begin() + static_cast<std::ptrdiff_t>(versions.size());
  bool behind = std::any_of(row.cells.begin(), versions_end, at(CellState::pending));
  bool differs = !std::all_of(versions_end, row.cells.end(), at(CellState::ok));
  row.cells.resize(columns.size());  // the columns of files without success: none, unless marked below
  auto failures = open_failures(hist);
  row.started = open_started(hist);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (contains(failures, columns[c].label)) row.cells[c] = {CellState::failed};
    if (names_file(row.started, columns[c].label)) row.cells[c] = {CellState::started};
  }
  row.invalid_indexes = shard.invalid_indexes;
  if (!failures.empty()) row.state = StatusState::failed;
  else if (!row.started.empty()) row.state = shard.lock_held ? StatusState::running : StatusState::interrupted;
  else if (!row.invalid_indexes.empty()) row.state = StatusState::invalid_index;
  else if (behind) row.state = StatusState::pending;
  else if (differs) row.state = StatusState::different;
  else row.state = StatusState::current;
  return row;
}

}  // namespace

StatusMatrix status_against_directory(const std::vector<Migration>& migrations, const std::vector<ShardHistory>& shards) {
  StatusMatrix m;
  for (const auto& mig : migrations) {
    m.columns.push_back({mig.file, mig.kind});
    if (mig.kind == Kind::versioned) m.head = mig.version->text();
  }
  std::vector<ShardPlan> plans(shards.size());
  for (std::size_t s = 0; s < shards.size(); ++s)
    if (shards[s].rows) plans[s] = plan_shard(migrations, *shards[s].rows);
  auto unknown = unknown_versions(shards, plans);
  for (const auto& [v, name] : unknown) m.columns.push_back({name, Kind::versioned});
  for (std::size_t s = 0; s < shards.size(); ++s)
    m.rows.push_back(shards[s].rows ? directory_row(migrations, unknown, shards[s], plans[s]) : unreachable_row(shards[s]));
  return m;
}

StatusMatrix status_between_shards(const std::vector<ShardHistory>& shards) {
  StatusMatrix m;
  auto versions = versions_applied(shards);
  // Repeatable files: the shards differ where their last checksums of a file do.
  auto last_sums = last_repeatable_checksums(shards);
  std::map<std::string, std::set<std::string>> repeatable_sums;  // name -> checksums seen
  for (const auto& shard_sums : last_sums)
    for (const auto& [name, sum] : shard_sums) repeatable_sums[name].insert(sum);
  for (const auto& [v, name] : versions) m.columns.push_back({name, Kind::versioned});
  for (const auto& [name, sums] : repeatable_sums) m.columns.push_back({name, Kind::repeatable});
  for (const auto& f : files_without_success(shards, m.columns))
    m.columns.push_back({f, f.rfind("R__", 0) == 0 ? Kind::repeatable : Kind::versioned});
  if (!versions.empty()) m.head = versions.rbegin()->first.text();
  for (std::size_t s = 0; s < shards.size(); ++s)
    m.rows.push_back(shards[s].rows ? between_row(shards[s], m.columns, versions, repeatable_sums, last_sums[s])
                                    : unreachable_row(shards[s]));
  return m;
}

}  // namespace shardctl::schema
