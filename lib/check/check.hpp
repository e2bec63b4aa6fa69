// shardctl check: orphans, strays and map consistency over a whole fleet, and the fixes.
// The entry points the shardctl-check binary calls; everything else in lib/check serves them.
#pragma once

#include <string>

#include "check/finding.hpp"
#include "config/config.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

// --fix's words: parse_word<FixMode>(text) reads one, a usage Error naming the choices.
enum class FixMode { report, quarantine, remove, rehome };
inline constexpr auto fix_mode_words =
    words<FixMode>({{FixMode::report, "report"}, {FixMode::quarantine, "quarantine"}, {FixMode::remove, "delete"},
                    {FixMode::rehome, "rehome"}})
        .otherwise("report")
        .named("--fix");
constexpr const auto& words_of(FixMode) noexcept { return fix_mode_words; }

struct Options {
  bool orphans = false;
  bool strays = false;
  bool map_consistency = false;
  bool references = false;     // every shard's copy of each reference table against the source of truth
  int parallel = 4;            // shards swept at once; connections: --parallel + 1 per server (shard_sweep.hpp)
  int sample = 10;             // example keys kept per finding
  int probe_batch = 5000;      // child keys per cross-shard probe round trip
  FixMode fix = FixMode::report;
  bool dry_run = false;        // with a fix: say what would change, change nothing
};

// Sweeps every online or readonly shard, grades the findings with `cfg`, applies the fix the
// options ask for (journaled as an operation), and returns the report. A shard that cannot be
// reached is named in report.unreachable; the other shards are still checked.
Report run_check(pg::Connection& catalog, const Options& options, const config::CheckConfig& cfg);

// Puts the rows `--fix quarantine` moved aside back into their tables on every shard.
Report restore_quarantined(pg::Connection& catalog, const Options& options);

}  // namespace shardctl::check
