// One shard's part of `shardctl query`: connect, BEGIN READ ONLY, statement_timeout, describe
// the statement's columns, then stream its rows in libpq's single-row mode (memory stays flat
// whatever the size), stop at --limit by cancelling the statement, always roll back.
#pragma once

#include <functional>

#include "query/query.hpp"

namespace shardctl::query {

struct ReadHooks {
  // The statement's columns, before any row; throws (an Error) to refuse the shard.
  std::function<void(const std::vector<Column>&)> columns;
  std::function<void(const std::vector<Cell>&)> row;
  // True when nobody reads the output any more: the shard stops early.
  std::function<bool()> stop;
};

// Counts rows into `result.rows` (and `result.limited`). Throws an Error when the shard fails:
// unavailable when it cannot be reached or the connection drops, data for the statement's own
// failure (read-only refusal, timeout, syntax) and for columns the hooks refuse.
void read_shard(const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result);

}  // namespace shardctl::query
