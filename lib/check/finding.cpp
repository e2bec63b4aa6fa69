#include "check/finding.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/words.hpp"

namespace shardctl::check {

bool is_reference(Kind kind) noexcept {
  return kind == Kind::reference_differs || kind == Kind::reference_tie || kind == Kind::reference_drift;
}
bool is_map_consistency(Kind kind) noexcept { return kind != Kind::orphans && kind != Kind::strays && !is_reference(kind); }

Severity default_severity(Kind kind) noexcept {
  switch (kind) {
    // Rows the application cannot reach or that break its joins, and key space that routes
    // nowhere or to a dead shard: data is wrong or unreachable right now.
    case Kind::orphans:
    case Kind::strays:
    case Kind::overlapping_mappings:
    case Kind::unmapped_keys:
    case Kind::mapping_unknown_shard:
    case Kind::mapping_offline_shard:
    case Kind::offline_mapping:
    case Kind::missing_table:
    // A reference copy that differs breaks the joins and foreign keys of the shard's own rows.
    case Kind::reference_differs:
    case Kind::reference_tie:
    case Kind::reference_drift:
    // A slot nobody consumes keeps its server's WAL until the disk fills.
    case Kind::leftover_slot: return Severity::critical;
    // Degraded but nothing is lost: writes may be refused, or an operation waits for resume.
    case Kind::mapping_readonly_shard:
    case Kind::leftover_guard:
    case Kind::expired_lease:
    case Kind::leftover_replication: return Severity::warning;
  }
  return Severity::critical;
}

void grade(std::vector<Finding>& findings, const config::CheckConfig& cfg) {
  auto listed = [](const std::vector<std::string>& list, Kind k) {
    return std::find(list.begin(), list.end(), to_text(k)) != list.end();
  };
  std::erase_if(findings, [&](const Finding& f) { return listed(cfg.ignore, f.kind); });
  for (auto& f : findings) {
    f.severity = default_severity(f.kind);
    if (listed(cfg.warning, f.kind)) f.severity = Severity::warning;
    if (listed(cfg.critical, f.kind)) f.severity = Severity::critical;
    const auto& at = f.kind == Kind::orphans ? cfg.orphans_critical_at
                     : f.kind == Kind::strays ? cfg.strays_critical_at
                                              : std::optional<std::int64_t>{};
    if (at && f.count >= *at) f.severity = Severity::critical;
  }
}

Status status_of(const Report& report) noexcept {
  bool critical = false, warning = false;
  for (const auto& f : report.left ? *report.left : report.findings) (f.severity == Severity::critical ? critical : warning) = true;
  if (critical) return Status::critical;
  if (!report.unreachable.empty() || !report.undetermined.empty()) return Status::unknown;
  return warning ? Status::warning : Status::ok;
}

int exit_code_of(Status s) noexcept {
  switch (s) {
    case Status::ok: return exit_code::ok;
    case Status::warning: return exit_code::check_warning;
    case Status::critical: return exit_code::check_critical;
    case Status::unknown: return exit_code::check_unknown;
  }
  return exit_code::check_unknown;
}

std::vector<std::pair<Kind, std::int64_t>> totals(const Report& report) {
  std::vector<std::pair<Kind, std::int64_t>> out;
  for (Kind k : all_kinds) {
    std::int64_t n = 0;
    for (const auto& f : report.findings)
      if (f.kind == k) n += f.count;
    out.emplace_back(k, n);
  }
  return out;
}

}  // namespace shardctl::check
