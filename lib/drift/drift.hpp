// shardctl schema drift: read every selected shard's structure (fingerprint.hpp) in parallel,
// compare them (compare.hpp) against the majority or a reference shard, report per shard.
//
// Exit status (report.exit_code()): 1 when any reachable shard differs, else 3 when a shard
// could not be read (unreachable, or its catalog query failed) or the reference could not,
// else 0. A difference found is a definite answer a retry will not change, so it wins over an
// incomplete one; both are listed in the report either way.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "drift/compare.hpp"
#include "fanout/fanout.hpp"

namespace shardctl::drift {

struct Options {
  fanout::Selection selection;
  std::optional<std::string> reference;  // compare against this shard, not the majority
  std::vector<std::string> ignore;       // compare.hpp: ignored()
  int parallel = 4;
  int connect_timeout = 5;                    // seconds
  std::chrono::milliseconds timeout{60'000};  // statement_timeout of the catalog query
};

struct ShardReport {
  fanout::Outcome outcome;
  std::size_t objects = 0;  // compared (after --ignore)
  std::string fingerprint;  // SHA-256 of them; empty when not read
  std::vector<Difference> differences;
};

struct Report {
  std::optional<std::string> reference;
  std::vector<ShardReport> shards;   // in shard-name order
  std::vector<std::string> offline;  // left out: the catalog marks them offline
  bool compared = true;              // false when the reference shard could not be read
  std::size_t differing() const noexcept;
  std::size_t unreadable() const noexcept;  // unreachable or failed
  int exit_code() const noexcept;           // 0, 1 or 3 as above
  // "the majority of 4 shards" or "reference shard shard_1".
  std::string basis() const;
};

// Usage Error (64) for an unknown map, shard or reference shard. A reference outside the
// selection is read as well, to compare against.
Report run(catalog::Store& store, const Options& options);

}  // namespace shardctl::drift
