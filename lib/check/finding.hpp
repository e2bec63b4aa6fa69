// What `shardctl check` finds: finding kinds, their severity, and how a report becomes a status
// and an exit code (shardctl(1), EXIT STATUS: 0 ok, 1 warning, 2 critical, 3 could not determine). Pure code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/words.hpp"

namespace shardctl::check {

enum class Kind {
  orphans,                 // child rows whose parent is missing on the shard the map routes to
  strays,                  // rows on a shard the map does not route their key to
  overlapping_mappings,    // two mappings of one map cover the same keys
  unmapped_keys,           // key space of a range or hash map no mapping covers
  mapping_unknown_shard,   // a mapping names a shard the catalog does not have
  mapping_offline_shard,   // a mapping routes to a shard marked offline
  mapping_readonly_shard,  // a mapping routes to a shard marked readonly
  offline_mapping,         // a mapping left offline with no live operation
  leftover_guard,          // a write guard whose operation is over (catalog row, trigger, range)
  expired_lease,           // an operation still "running" whose lease expired and runner is gone
  missing_table,           // a sharded table absent on a shard of its map
  leftover_slot,           // a shardctl logical replication slot no live operation owns (keeps WAL)
  leftover_replication,    // a shardctl publication or subscription no live operation owns
  reference_differs,       // a shard's copy of a reference table differs from the source of truth's
  reference_tie,           // a reference table's copies differ and no majority (nor a named source) says which is right
  reference_drift,         // a shard's copy of a reference table has other columns or key (or is missing)
};

// The words reports, JSON and the [check] config use, in the order reports list the kinds.
inline constexpr auto kind_words = words<Kind>(
    {{Kind::orphans, "orphans"}, {Kind::strays, "strays"}, {Kind::overlapping_mappings, "overlapping_mappings"},
     {Kind::unmapped_keys, "unmapped_keys"}, {Kind::mapping_unknown_shard, "mapping_unknown_shard"},
     {Kind::mapping_offline_shard, "mapping_offline_shard"}, {Kind::mapping_readonly_shard, "mapping_readonly_shard"},
     {Kind::offline_mapping, "offline_mapping"}, {Kind::leftover_guard, "leftover_guard"},
     {Kind::expired_lease, "expired_lease"}, {Kind::missing_table, "missing_table"},
     {Kind::leftover_slot, "leftover_slot"}, {Kind::leftover_replication, "leftover_replication"},
     {Kind::reference_differs, "reference_differs"}, {Kind::reference_tie, "reference_tie"},
     {Kind::reference_drift, "reference_drift"}})
        .otherwise("?");  // a value out of range prints as ?
inline constexpr auto all_kinds = kind_words.values();
constexpr const auto& words_of(Kind) noexcept { return kind_words; }
using shardctl::operator<<;
using shardctl::to_text;
// The check family a kind belongs to: orphans, strays, references, or map-consistency.
bool is_map_consistency(Kind kind) noexcept;
bool is_reference(Kind kind) noexcept;

enum class Severity { warning, critical };
inline constexpr auto severity_words =
    words<Severity>({{Severity::warning, "warning"}, {Severity::critical, "critical"}}).otherwise("warning");
constexpr const auto& words_of(Severity) noexcept { return severity_words; }
Severity default_severity(Kind kind) noexcept;

struct Finding {
  Kind kind = Kind::orphans;
  Severity severity = Severity::warning;  // grade() sets it
  std::string shard;                      // empty for catalog-wide findings
  std::string table;                      // the table concerned, when there is one
  std::string object;                     // xref, map, mapping range, operation id or replication object
  std::int64_t count = 0;                 // rows for orphans, strays and reference_differs, else objects
  std::vector<std::string> samples;       // example keys, sorted
  std::string detail;                     // one line for people
};

struct Unreachable {
  std::string shard;
  std::string error;
  bool refused = false;  // its server was out of connection slots (TooManyConnections), not down
};

// What a fix does to rows: the words are what reports and the journal show.
enum class FixKind { quarantine, remove, rehome, restore };
inline constexpr auto fix_kind_words =
    words<FixKind>({{FixKind::quarantine, "quarantine"}, {FixKind::remove, "delete"}, {FixKind::rehome, "rehome"},
                    {FixKind::restore, "restore"}})
        .otherwise("quarantine");
constexpr const auto& words_of(FixKind) noexcept { return fix_kind_words; }

// What a --fix did (or, with --dry-run, would do) about one finding.
struct FixAction {
  FixKind action = FixKind::quarantine;
  std::string shard;
  std::string table;
  std::string target;  // rehome: the shard the rows went to
  std::int64_t rows = 0;
  bool dry_run = false;
  std::string detail;
};

struct Report {
  std::vector<Kind> checked;           // the kinds this run looked for
  std::vector<std::string> shards;     // shards swept (reachable or not)
  std::vector<Finding> findings;
  std::vector<Unreachable> unreachable;
  // Shards whose orphan and stray results were dropped: the catalog's routing kept changing
  // under the sweep (error says how). Like an unreachable shard, the run is UNKNOWN.
  std::vector<Unreachable> undetermined;
  std::vector<FixAction> fixes;
  std::string operation;               // the journaled fix operation, if any
  // After a --fix that changed rows: what a sweep of the same kinds found once it was done.
  // The run's status and exit code are theirs: what is left, not what was fixed.
  std::optional<std::vector<Finding>> left;
};

enum class Status { ok, warning, critical, unknown };
inline constexpr auto status_words =
    words<Status>({{Status::ok, "OK"}, {Status::warning, "WARNING"}, {Status::critical, "CRITICAL"}, {Status::unknown, "UNKNOWN"}})
        .otherwise("UNKNOWN");
constexpr const auto& words_of(Status) noexcept { return status_words; }

// Applies the [check] config: drops ignored kinds, sets each finding's severity from its
// default, the warning/critical lists, and the *_critical_at row counts.
void grade(std::vector<Finding>& findings, const config::CheckConfig& cfg);

// Of the findings left after a fix when there was one (Report::left), else of those found:
// critical findings win; then an unreachable shard (the run could not see everything); then
// warnings. A critical problem seen elsewhere must not hide behind a shard that is down.
Status status_of(const Report& report) noexcept;
int exit_code_of(Status s) noexcept;

// Sum of counts per kind, in all_kinds order.
std::vector<std::pair<Kind, std::int64_t>> totals(const Report& report);

}  // namespace shardctl::check
