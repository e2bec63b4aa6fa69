// The rows of shardctl.schema_history (schema_history.hpp), without I/O, so pure code (the
// per-shard plan of `shardctl schema`, lib/schema/plan.hpp) can take them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shardctl::shardside {

// One row as read. kind: versioned | repeatable | baseline.
struct SchemaHistoryRow {
  std::int64_t id = 0;
  std::optional<std::string> version;  // null for repeatable rows
  std::string name;                    // file name (a baseline without files: "<baseline>")
  std::string kind;
  std::string checksum;                // "sha256:<hex>"; empty for a baseline marker
  std::string applied_at;
  std::int64_t duration_ms = 0;
  std::string applied_by;
  bool success = false;
  // success IS NULL: a no-transaction file recorded that it started and never recorded how it
  // ended (its run was killed or lost its connection): its statements may have run, or not.
  bool unfinished = false;
};

// One row as written (INSERT parameters).
struct NewSchemaHistoryRow {
  std::optional<std::string> version;
  std::string name;
  std::string kind;
  std::optional<std::string> checksum;
  std::int64_t duration_ms = 0;
  std::optional<bool> success = true;  // nullopt: started, outcome not known yet
  std::string note;                    // "" for none
};

}  // namespace shardctl::shardside
