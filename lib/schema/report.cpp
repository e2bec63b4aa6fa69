#include "schema/report.hpp"

#include <algorithm>
#include <map>

#include "output/table.hpp"

namespace shardctl::schema {
namespace {

nlohmann::json invalid_json(const std::vector<InvalidIndex>& invalid) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& ix : invalid)
    out.push_back({{"index", ix.index},
                   {"table", ix.table},
                   {"drop", ix.drop_sql},
                   {"file", ix.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(ix.file)}});
  return out;
}

nlohmann::json started_json(const std::vector<Started>& started) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& st : started) out.push_back({{"file", st.file}, {"started_at", st.at}, {"by", st.by}});
  return out;
}

// "shard_2: index public.x on public.t is INVALID (V2__x.sql creates it); drop it with: DROP ..."
void print_invalid(std::ostream& out, const std::string& shard, const std::vector<InvalidIndex>& invalid) {
  for (const auto& ix : invalid) {
    out << shard << ": index " << ix.index << " on " << ix.table << " is INVALID";
    if (!ix.file.empty()) out << " (" << ix.file << " creates it)";
    out << "; drop it with: " << ix.drop_sql << '\n';
  }
}

void print_started(std::ostream& out, const std::string& shard, const std::vector<Started>& started) {
  for (const auto& st : started)
    out << shard << ": " << st.file << " started at " << st.at << " and never finished; apply stops there until "
        << "`shardctl schema repair` records what it did\n";
}

// The shard states in the order the apply summary counts them.
constexpr ShardState shard_states[] = {ShardState::ok,      ShardState::failed,  ShardState::locked,
                                       ShardState::unreachable, ShardState::refused, ShardState::skipped};

std::size_t applied_count(const ShardReport& s) {
  return std::count_if(s.files.begin(), s.files.end(), [](const FileResult& f) { return f.state == FileRunState::applied; });
}

std::string ms_text(std::int64_t ms) {
  if (ms < 10'000) return std::to_string(ms) + " ms";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

nlohmann::json shard_json(const ShardReport& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files)
    files.push_back({{"file", f.file},
                     {"version", f.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.version)},
                     {"kind", to_text(f.kind)},
                     {"state", to_text(f.state)},
                     {"duration_ms", f.duration_ms},
                     {"error", f.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.error)}});
  auto opt = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  auto invalid = invalid_json(s.invalid_indexes);
  return {{"shard", s.shard},
          {"state", to_text(s.state)},
          {"version_before", opt(s.version_before)},
          {"version", opt(s.version_after)},
          {"planned", s.planned},
          {"applied", files},
          {"duration_ms", s.duration_ms},
          {"error", opt(s.error)},
          {"hint", opt(s.hint)},
          {"invalid_indexes", invalid}};
}

// A cell in the text table: what needs attention in capitals.
std::string cell_text(const Cell& c) {
  switch (c.state) {
    case CellState::pending: return "-";
    case CellState::failed: return "FAILED";
    case CellState::changed: return "CHANGED";
    case CellState::started: return "STARTED";
    case CellState::invalid: return "INVALID";
    case CellState::baseline: return "base";
    case CellState::none:
    case CellState::ok:
    case CellState::differs: break;
  }
  return to_text(c);
}

// "V12__add_x.sql" -> "V12"; anything else as it is.
std::string column_header(const StatusColumn& c) {
  if (c.kind == Kind::versioned && !c.label.empty() && c.label[0] == 'V') {
    auto sep = c.label.find("__");
    if (sep != std::string::npos) return c.label.substr(0, sep);
    auto sp = c.label.find(' ');
    if (sp != std::string::npos) return c.label.substr(0, sp);
  }
  return c.label;
}

}  // namespace

nlohmann::json to_json(const ApplyResult& r) {
  auto opt = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json doc;
  doc["head"] = opt(r.head);
  if (r.dry_run) {
    nlohmann::json shards = nlohmann::json::array();
    for (const auto& p : r.plan)
      shards.push_back({{"shard", p.shard},
                        {"state", to_text(p.state)},
                        {"version", opt(p.version)},
                        {"pending", p.pending},
                        {"out_of_order", p.out_of_order},
                        {"unknown", p.unknown},
                        {"failed", p.failed},
                        {"started", started_json(p.started)},
                        {"invalid_indexes", invalid_json(p.invalid_indexes)},
                        {"error", opt(p.error)}});
    doc["shards"] = shards;
  } else {
    nlohmann::json shards = nlohmann::json::array();
    std::map<std::string, int> counts;
    for (auto state : shard_states) counts[std::string(to_text(state))] = 0;
    for (const auto& s : r.shards) {
      shards.push_back(shard_json(s));
      counts[std::string(to_text(s.state))]++;
    }
    doc["shards"] = shards;
    doc["canary"] = r.canary;
    doc["canary_failed"] = r.canary_failed;
    doc["summary"] = counts;
  }
  doc["exit_code"] = r.exit_code;
  return doc;
}

nlohmann::json to_json(const StatusMatrix& m) {
  nlohmann::json cols = nlohmann::json::array();
  for (const auto& c : m.columns) cols.push_back({{"name", c.label}, {"kind", to_text(c.kind)}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : m.rows) {
    nlohmann::json cells = nlohmann::json::object();
    for (std::size_t i = 0; i < r.cells.size() && i < m.columns.size(); ++i)
      if (r.cells[i].state != CellState::none) cells[m.columns[i].label] = to_text(r.cells[i]);
    rows.push_back({{"shard", r.shard},
                    {"state", to_text(r.state)},
                    {"version", r.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.version)},
                    {"migrations", cells},
                    {"started", started_json(r.started)},
                    {"invalid_indexes", invalid_json(r.invalid_indexes)},
                    {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)}});
  }
  return {{"head", m.head.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.head)},
          {"columns", cols},
          {"shards", rows},
          {"exit_code", m.exit_code()}};
}

nlohmann::json to_json(const BaselineResult& r) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& s : r.shards)
    shards.push_back({{"shard", s.shard},
                      {"state", to_text(s.state)},
                      {"version_before", s.version_before.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.version_before)},
                      {"version", s.version_after.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.version_after)},
                      {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)}});
  return {{"version", r.version}, {"files", r.files}, {"shards", shards}, {"exit_code", r.exit_code}};
}

void print_apply(std::ostream& out, const ApplyResult& r) {
  if (r.dry_run) {
    output::TextTable t({"SHARD", "STATE", "VERSION", "WOULD APPLY"});
    for (const auto& p : r.plan) {
      std::string files;
      for (const auto& f : p.pending) files += (files.empty() ? "" : " ") + f;
      t.add_row({p.shard, p.state == PlannedState::up_to_date ? "up to date" : std::string(to_text(p.state)),
                 p.version.empty() ? "-" : p.version,
                 p.state == PlannedState::unreachable || p.state == PlannedState::refused ? p.error : files});
    }
    t.print(out);
    for (const auto& p : r.plan) {
      for (const auto& f : p.out_of_order) out << p.shard << ": " << f << " is below the shard's version; it would run out of order\n";
      for (const auto& f : p.unknown) out << p.shard << ": applied " << f << " is not in the directory\n";
      for (const auto& f : p.failed) out << p.shard << ": " << f << " failed before; it would run again\n";
      print_started(out, p.shard, p.started);
      print_invalid(out, p.shard, p.invalid_indexes);
    }
    return;
  }
  output::TextTable t({"SHARD", "STATE", "VERSION", "APPLIED", "DURATION", "ERROR"});
  std::map<ShardState, int> counts;
  for (const auto& s : r.shards) {
    t.add_row({s.shard, std::string(to_text(s.state)), s.version_after.empty() ? "-" : s.version_after,
               std::to_string(applied_count(s)) + "/" + std::to_string(s.planned.size()),
               s.state == ShardState::skipped ? "-" : ms_text(s.duration_ms), s.error});
    counts[s.state]++;
  }
  t.print(out);
  for (const auto& s : r.shards) print_invalid(out, s.shard, s.invalid_indexes);
  out << r.shards.size() << " shard(s)";
  const char* sep = ": ";
  for (auto st : shard_states)
    if (counts[st]) {
      out << sep << counts[st] << ' ' << st;
      sep = ", ";
    }
  if (!r.head.empty()) out << "; directory head " << r.head;
  if (r.canary_failed) out << "; the canary wave failed, the other shards were not started";
  out << '\n';
}

void print_status(std::ostream& out, const StatusMatrix& m) {
  std::vector<std::string> headers{"SHARD", "STATE", "VERSION"};
  for (const auto& c : m.columns) headers.push_back(column_header(c));
  output::TextTable t(headers);
  for (const auto& r : m.rows) {
    std::vector<std::string> row{r.shard, std::string(to_text(r.state)), r.version.empty() ? "-" : r.version};
    for (std::size_t i = 0; i < m.columns.size(); ++i) row.push_back(i < r.cells.size() ? cell_text(r.cells[i]) : "");
    t.add_row(row);
  }
  t.print(out);
  for (const auto& r : m.rows) {
    if (!r.error.empty()) out << r.shard << ": " << r.error << '\n';
    for (const auto& st : r.started)
      out << r.shard << ": " << st.file << " started at " << st.at << " and never finished"
          << (r.state == StatusState::running ? " (the rollout lock is held: a rollout may be running it)" : "; `shardctl schema repair` records what it did")
          << '\n';
    print_invalid(out, r.shard, r.invalid_indexes);
  }
  out << "head " << (m.head.empty() ? "-" : m.head) << "; ok applied, - pending, base covered by a baseline\n";
}

void print_baseline(std::ostream& out, const BaselineResult& r, bool dry_run) {
  output::TextTable t({"SHARD", "STATE", "VERSION", "ERROR"});
  for (const auto& s : r.shards) t.add_row({s.shard, std::string(to_text(s.state)), s.version_after.empty() ? "-" : s.version_after, s.error});
  t.print(out);
  out << (dry_run ? "would record" : "recorded") << " version " << r.version;
  if (!r.files.empty()) out << " with " << r.files.size() << " file(s) and their checksums";
  out << " as applied; nothing was run\n";
}

nlohmann::json to_json(const RepairResult& r) {
  nlohmann::json shards = nlohmann::json::array();
  auto opt = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (const auto& s : r.shards)
    shards.push_back({{"shard", s.shard},
                      {"state", to_text(s.state)},
                      {"was", s.was ? nlohmann::json(to_text(*s.was)) : nlohmann::json(nullptr)},
                      {"recorded", s.recorded},
                      {"error", opt(s.error)}});
  return {{"file", r.file}, {"mark", to_text(r.mark)}, {"dry_run", r.dry_run}, {"shards", shards}, {"exit_code", r.exit_code}};
}

void print_repair(std::ostream& out, const RepairResult& r) {
  output::TextTable t({"SHARD", "STATE", "WAS", "RECORDED", "ERROR"});
  std::size_t n = 0;
  for (const auto& s : r.shards) {
    t.add_row({s.shard, std::string(to_text(s.state)), s.was ? std::string(to_text(*s.was)) : "-",
               s.recorded ? "marked " + std::string(to_text(r.mark)) : "-", s.error});
    n += s.recorded;
  }
  t.print(out);
  out << (r.dry_run ? "would mark " : "marked ") << r.file << " " << r.mark << " on " << n << " shard(s)";
  if (n) out << (r.mark == RepairMark::applied ? "; apply takes it as applied" : "; the next apply runs it again");
  out << '\n';
}

std::string progress_line(const ShardReport& r) {
  std::string line = r.shard + ": " + std::string(to_text(r.state));
  if (r.state == ShardState::skipped) return line;
  if (!r.version_after.empty()) line += " at " + r.version_after;
  line += ", " + std::to_string(applied_count(r)) + " applied in " + ms_text(r.duration_ms);
  if (!r.error.empty()) line += ": " + r.error;
  return line;
}

std::vector<output::JunitCase> junit_cases(const ApplyResult& r, const std::vector<Migration>& migrations) {
  std::vector<output::JunitCase> cases;
  std::map<std::string, const PlannedShard*> plans;
  for (const auto& p : r.plan) plans[p.shard] = &p;
  for (const auto& s : r.shards) {
    std::string cls = "shardctl.schema.apply." + s.shard;
    if ((s.state == ShardState::unreachable || s.state == ShardState::refused || s.state == ShardState::locked) &&
        s.files.empty()) {
      output::JunitCase c{cls, s.state == ShardState::locked ? "rollout lock" : "connect", static_cast<double>(s.duration_ms) / 1000.0,
                          s.error, s.hint, false};
      cases.push_back(c);
      continue;
    }
    // A shard that failed without a file failing (an interrupted file stopped it before any ran,
    // or an INVALID index under an applied file): one failed case "shard" says why.
    bool file_failed = std::any_of(s.files.begin(), s.files.end(), [](const FileResult& f) { return f.state != FileRunState::applied; });
    if (s.state == ShardState::failed && !file_failed) {
      std::string details = s.hint;
      for (const auto& ix : s.invalid_indexes) details += "\n" + ix.drop_sql;
      cases.push_back({cls, "shard", static_cast<double>(s.duration_ms) / 1000.0, s.error, details, false});
      if (s.files.empty()) continue;
    }
    std::vector<std::string> pending = s.planned;
    if (s.state == ShardState::skipped)
      if (auto it = plans.find(s.shard); it != plans.end()) pending = it->second->pending;
    for (const auto& m : migrations) {
      output::JunitCase c;
      c.classname = cls;
      c.name = m.file;
      auto f = std::find_if(s.files.begin(), s.files.end(), [&](const FileResult& x) { return x.file == m.file; });
      if (f != s.files.end()) {
        c.seconds = static_cast<double>(f->duration_ms) / 1000.0;
        if (f->state != FileRunState::applied) {
          c.failure = f->error;
          c.details = s.hint;
          for (const auto& ix : s.invalid_indexes) c.details += "\n" + ix.drop_sql;
        }
      } else if (std::find(pending.begin(), pending.end(), m.file) != pending.end()) {
        c.skipped = true;  // not reached
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<output::JunitCase> junit_cases(const StatusMatrix& m) {
  std::vector<output::JunitCase> cases;
  for (const auto& r : m.rows) {
    std::string cls = "shardctl.schema.status." + r.shard;
    if (r.state == StatusState::unreachable || r.state == StatusState::refused) {
      cases.push_back({cls, "connect", 0, r.error, "", false});
      continue;
    }
    for (std::size_t i = 0; i < m.columns.size() && i < r.cells.size(); ++i) {
      const auto& cell = r.cells[i];
      output::JunitCase c;
      c.classname = cls;
      c.name = m.columns[i].label;
      switch (cell.state) {
        case CellState::none: c.skipped = true; break;
        case CellState::pending: c.failure = "pending on " + r.shard; break;
        case CellState::failed: c.failure = "the last attempt failed on " + r.shard; break;
        case CellState::changed: c.failure = "applied with another checksum on " + r.shard; break;
        case CellState::started: c.failure = "started and never finished on " + r.shard; break;
        case CellState::invalid: c.failure = "an index it creates is INVALID on " + r.shard; break;
        case CellState::differs: c.failure = "differs on " + r.shard + ": " + to_text(cell); break;
        case CellState::ok:
        case CellState::baseline: break;
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace shardctl::schema
