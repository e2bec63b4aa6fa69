// An archive run's journal in the catalog: the run is an operation (kind "archive", args = the
// job); shardctl.archive_shards holds each shard's fixed upper bound, cursor and state, and
// shardctl.archive_batches each batch's bounds, timestamp and step. Key values are text arrays
// in primary-key column order.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "archive/job.hpp"
#include "core/words.hpp"

namespace shardctl::archive {

using KeyValues = std::vector<std::string>;

// Where a shard of a run is (shardctl.archive_shards.state): pending until its first batch,
// running, done when nothing is left up to its upper bound (at once when the root table was
// empty). The words are the catalog's (and `archive show`'s, JSON's); code compares the enum.
// Its words only in the table below.
enum class ShardState { pending, running, done };
inline constexpr auto shard_state_words =
    words<ShardState>({{ShardState::pending, "pending"}, {ShardState::running, "running"}, {ShardState::done, "done"}})
        .otherwise("pending")  // a value out of range prints as pending
        .stored_as("archive shard state", "shardctl.archive_shards");
constexpr const auto& words_of(ShardState) noexcept { return shard_state_words; }

// The step a batch reached (shardctl.archive_batches.step): selected (bounds and timestamp
// journaled, nothing delivered), delivered (the destination committed it), deleted (the source
// committed its DELETE: the batch is done). Its words only in the table below.
enum class BatchStep { selected, delivered, deleted };
inline constexpr auto batch_step_words =
    words<BatchStep>({{BatchStep::selected, "selected"}, {BatchStep::delivered, "delivered"}, {BatchStep::deleted, "deleted"}})
        .otherwise("selected")  // a value out of range prints as selected
        .stored_as("archive batch step", "shardctl.archive_batches");
constexpr const auto& words_of(BatchStep) noexcept { return batch_step_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct ShardRunState {
  std::int64_t shard_id = 0;
  std::string shard;
  std::optional<KeyValues> upper;   // none: the root table was empty when the run started
  std::optional<KeyValues> cursor;  // the last key archived; none before the first batch
  ShardState state = ShardState::pending;
  int batches_done = 0;
  nlohmann::json rows = nlohmann::json::object();  // table -> rows archived
  std::int64_t refused = 0;  // root rows kept because rows still reference them (no --cascade)
};

struct BatchState {
  int batch_no = 0;
  std::optional<KeyValues> low;
  KeyValues high;
  std::string archived_at;  // ISO 8601 UTC
  BatchStep step = BatchStep::selected;
  nlohmann::json tables = nlohmann::json::object();
};

// Journals a new run held by this process; `upper` per shard id. Returns its id.
std::string insert_run(pqxx::work& tx, const Job& job, const nlohmann::json& tables,
                       const std::vector<std::pair<std::int64_t, std::optional<KeyValues>>>& upper);
std::vector<ShardRunState> run_shards(pqxx::work& tx, const std::string& run);
// The shard's batch not yet deleted at the source, if any (at most one per shard).
std::optional<BatchState> pending_batch(pqxx::work& tx, const std::string& run, std::int64_t shard_id);
// Journals the next batch (low, high] with a fresh timestamp, before anything is delivered.
BatchState insert_batch(pqxx::work& tx, const std::string& run, std::int64_t shard_id, const std::optional<KeyValues>& low,
                        const KeyValues& high);
void mark_delivered(pqxx::work& tx, const std::string& run, std::int64_t shard_id, int batch_no,
                    const nlohmann::json& tables);
// The source deleted the batch: it is done, and the shard's cursor moves to its upper end.
void mark_deleted(pqxx::work& tx, const std::string& run, std::int64_t shard_id, const BatchState& batch,
                  const nlohmann::json& tables, std::int64_t refused);
void mark_shard_done(pqxx::work& tx, const std::string& run, std::int64_t shard_id);
// The latest run of job `name` that has not ended (done or cancelled), if any.
std::optional<std::string> unfinished_run(pqxx::work& tx, const std::string& name);

}  // namespace shardctl::archive
