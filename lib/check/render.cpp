#include "check/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "output/table.hpp"

namespace shardctl::check {
namespace {

// "public.order_lines" reads as "order_lines" in one-line summaries; other schemas stay.
std::string short_table(const std::string& t) { return t.rfind("public.", 0) == 0 ? t.substr(7) : t; }

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Phrase for a group of findings of one kind (and table, for row findings).
std::string phrase(Kind kind, const std::string& table, std::int64_t count, std::size_t shards) {
  std::string on = " on " + plural(static_cast<std::int64_t>(shards), "shard", "shards");
  switch (kind) {
    case Kind::orphans: return std::to_string(count) + " orphaned " + short_table(table) + on;
    case Kind::strays: return plural(count, "stray " + short_table(table) + " row", "stray " + short_table(table) + " rows") + on;
    case Kind::overlapping_mappings: return plural(count, "overlapping mapping pair", "overlapping mapping pairs");
    case Kind::unmapped_keys: return plural(count, "unmapped key range", "unmapped key ranges");
    case Kind::mapping_unknown_shard: return plural(count, "mapping to an unknown shard", "mappings to unknown shards");
    case Kind::mapping_offline_shard: return plural(count, "mapping to an offline shard", "mappings to offline shards");
    case Kind::mapping_readonly_shard: return plural(count, "mapping to a readonly shard", "mappings to readonly shards");
    case Kind::offline_mapping: return plural(count, "offline mapping without operation", "offline mappings without operation");
    case Kind::leftover_guard: return plural(count, "left-over write guard", "left-over write guards");
    case Kind::expired_lease: return plural(count, "operation with an expired lease", "operations with an expired lease");
    case Kind::missing_table: return plural(count, "missing sharded table", "missing sharded tables");
    case Kind::leftover_slot: return plural(count, "left-over replication slot", "left-over replication slots");
    case Kind::leftover_replication:
      return plural(count, "left-over publication or subscription", "left-over publications and subscriptions");
    case Kind::reference_differs:
      return plural(count, "differing " + short_table(table) + " row", "differing " + short_table(table) + " rows") + on;
    case Kind::reference_tie: return short_table(table) + " copies without a majority";
    case Kind::reference_drift: return "other columns of " + short_table(table) + on;
  }
  return "?";
}

std::string prom_escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The shards not read because their servers were out of connection slots.
std::size_t refused_count(const Report& report) {
  return static_cast<std::size_t>(
      std::count_if(report.unreachable.begin(), report.unreachable.end(), [](const Unreachable& u) { return u.refused; }));
}

}  // namespace

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  std::replace(s.begin(), s.end(), '|', '/');  // '|' starts Nagios perfdata
  return s;
}

namespace {

void print_findings(std::ostream& out, const std::vector<Finding>& findings) {
  if (!findings.empty()) {
    output::TextTable t({"SEVERITY", "KIND", "SHARD", "TABLE", "OBJECT", "COUNT", "SAMPLES", "DETAIL"});
    for (const auto& f : findings) {
      std::string samples;
      for (std::size_t i = 0; i < f.samples.size() && i < 3; ++i) samples += (i ? " " : "") + f.samples[i];
      if (f.samples.size() > 3) samples += " ...";
      t.add_row({std::string(to_text(f.severity)), std::string(to_text(f.kind)), f.shard.empty() ? "-" : f.shard,
                 f.table.empty() ? "-" : f.table, f.object.empty() ? "-" : f.object, std::to_string(f.count),
                 samples.empty() ? "-" : samples, f.detail});
    }
    t.print(out);
  }
}

}  // namespace

void print_text(std::ostream& out, const Report& report) {
  Status status = status_of(report);
  print_findings(out, report.findings);
  for (const auto& u : report.unreachable)
    out << "shard " << u.shard << (u.refused ? " refused: too many connections: " : " unreachable: ") << u.error << '\n';
  for (const auto& u : report.undetermined) out << "shard " << u.shard << " not determined: " << u.error << '\n';
  for (const auto& a : report.fixes)
    out << (a.dry_run ? "would " : "") << to_text(a.action) << " " << a.rows << " row(s) of " << a.table << " on " << a.shard
        << (a.target.empty() ? "" : " to " + a.target) << (a.detail.empty() ? "" : " (" + a.detail + ")") << '\n';
  if (!report.operation.empty()) out << "journaled as operation " << report.operation << '\n';
  if (report.left) {
    out << "left after the fix:" << (report.left->empty() ? " nothing" : "") << '\n';
    print_findings(out, *report.left);
  }
  const auto& graded = report.left ? *report.left : report.findings;
  std::size_t critical = 0;
  for (const auto& f : graded) critical += f.severity == Severity::critical;
  auto refused = refused_count(report);
  out << "status" << (report.left ? " after the fix" : "") << ": " << to_text(status) << " (" << critical << " critical, "
      << graded.size() - critical << " warning finding(s)" << (report.left ? " left" : "") << "; " << report.shards.size() << " shard(s) checked, " << report.unreachable.size() - refused
      << " unreachable" << (refused ? ", " + std::to_string(refused) + " refused: too many connections" : "") << ")\n";
}

namespace {

nlohmann::json finding_json(const Finding& f) {
  using nlohmann::json;
  return {{"kind", to_text(f.kind)},
          {"severity", to_text(f.severity)},
          {"shard", f.shard.empty() ? json(nullptr) : json(f.shard)},
          {"table", f.table.empty() ? json(nullptr) : json(f.table)},
          {"object", f.object.empty() ? json(nullptr) : json(f.object)},
          {"count", f.count},
          {"samples", f.samples},
          {"detail", f.detail}};
}

}  // namespace

nlohmann::json to_json(const Report& report) {
  using nlohmann::json;
  Status status = status_of(report);
  json doc;
  doc["status"] = lowercase(to_text(status));
  doc["exit_code"] = exit_code_of(status);
  doc["checks"] = json::array();
  for (Kind k : report.checked) doc["checks"].push_back(to_text(k));
  doc["shards"] = report.shards;
  // A shard whose server was out of connection slots is "refused", not "unreachable".
  doc["unreachable"] = json::array();
  doc["refused"] = json::array();
  for (const auto& u : report.unreachable)
    doc[u.refused ? "refused" : "unreachable"].push_back({{"shard", u.shard}, {"error", u.error}});
  doc["undetermined"] = json::array();
  for (const auto& u : report.undetermined) doc["undetermined"].push_back({{"shard", u.shard}, {"error", u.error}});
  doc["summary"] = json::object();
  for (const auto& [k, n] : totals(report)) doc["summary"][std::string(to_text(k))] = n;
  doc["findings"] = json::array();
  for (const auto& f : report.findings) doc["findings"].push_back(finding_json(f));
  doc["left"] = json(nullptr);
  if (report.left) {
    doc["left"] = json::array();
    for (const auto& f : *report.left) doc["left"].push_back(finding_json(f));
  }
  doc["fixes"] = json::array();
  for (const auto& a : report.fixes)
    doc["fixes"].push_back({{"action", std::string(to_text(a.action))},
                            {"shard", a.shard},
                            {"table", a.table},
                            {"target", a.target.empty() ? json(nullptr) : json(a.target)},
                            {"rows", a.rows},
                            {"dry_run", a.dry_run},
                            {"detail", a.detail}});
  doc["operation"] = report.operation.empty() ? json(nullptr) : json(report.operation);
  return doc;
}

std::string nagios_line(const Report& report) {
  Status status = status_of(report);
  std::vector<std::string> parts;
  for (const auto& u : report.unreachable)
    parts.push_back("shard " + u.shard + (u.refused ? " refused: too many connections" : " unreachable"));
  for (const auto& u : report.undetermined) parts.push_back("shard " + u.shard + " not determined");
  // Critical groups first, then warnings; within a severity, in kind order.
  for (Severity sev : {Severity::critical, Severity::warning})
    for (Kind k : all_kinds) {
      // Row findings group per table; the others per kind.
      std::map<std::string, std::pair<std::int64_t, std::set<std::string>>> groups;
      for (const auto& f : report.findings)
        if (f.kind == k && f.severity == sev) {
          auto& g = groups[k == Kind::orphans || k == Kind::strays || is_reference(k) ? f.table : ""];
          g.first += f.count;
          if (!f.shard.empty()) g.second.insert(f.shard);
        }
      for (const auto& [table, g] : groups) parts.push_back(phrase(k, table, g.first, g.second.size()));
    }
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
  if (text.empty()) text = "no findings on " + plural(static_cast<std::int64_t>(report.shards.size()), "shard", "shards");
  std::string perf;
  for (const auto& [k, n] : totals(report)) perf += fmt::format("{}{}={}", perf.empty() ? "" : " ", to_text(k), n);
  auto refused = refused_count(report);
  perf += fmt::format(" unreachable_shards={}", report.unreachable.size() - refused);
  if (refused) perf += fmt::format(" refused_shards={}", refused);
  return one_line("SHARDCTL " + std::string(to_text(status)) + " - " + text) + " | " + perf;
}

std::string prometheus_text(const Report& report, double now_seconds) {
  std::string out;
  out += "# HELP shardctl_check_findings What shardctl check found per finding kind and shard: rows for orphans "
         "and strays, objects for the others.\n";
  out += "# TYPE shardctl_check_findings gauge\n";
  // Every kind checked on every shard swept, zero when clean; catalog-wide findings carry an
  // empty shard label.
  std::map<std::pair<std::string, std::string>, std::int64_t> values;
  for (Kind k : report.checked) {
    if (is_map_consistency(k) || k == Kind::reference_tie) values[{std::string(to_text(k)), ""}] += 0;
    for (const auto& s : report.shards) values[{std::string(to_text(k)), s}] += 0;
  }
  for (const auto& f : report.findings) values[{std::string(to_text(f.kind)), f.shard}] += f.count;
  for (const auto& [key, v] : values)
    out += fmt::format("shardctl_check_findings{{kind=\"{}\",shard=\"{}\"}} {}\n", prom_escape(key.first),
                       prom_escape(key.second), v);
  out += "# HELP shardctl_check_shard_up Whether shardctl check could read the shard (1) or not (0).\n";
  out += "# TYPE shardctl_check_shard_up gauge\n";
  for (const auto& s : report.shards) {
    bool down = std::any_of(report.unreachable.begin(), report.unreachable.end(),
                            [&](const Unreachable& u) { return u.shard == s; });
    out += fmt::format("shardctl_check_shard_up{{shard=\"{}\"}} {}\n", prom_escape(s), down ? 0 : 1);
  }
  out += "# HELP shardctl_check_status Outcome of the last run: 0 ok, 1 warning, 2 critical, 3 unknown.\n";
  out += "# TYPE shardctl_check_status gauge\n";
  out += fmt::format("shardctl_check_status {}\n", exit_code_of(status_of(report)));
  out += "# HELP shardctl_check_last_run_timestamp_seconds When the last shardctl check finished.\n";
  out += "# TYPE shardctl_check_last_run_timestamp_seconds gauge\n";
  out += fmt::format("shardctl_check_last_run_timestamp_seconds {:.3f}\n", now_seconds);
  return out;
}

}  // namespace shardctl::check
