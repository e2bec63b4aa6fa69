// One shard's part of `shardctl query`: connect, BEGIN READ ONLY, statement_timeout, describe
// the statement's columns, then stream its rows in libpq's single-row mode (memory stays flat
// whatever the size), stop at --limit by cancelling the statement, always roll back.
#pragma once

#include <functional>

#include "core/error.hpp"
#include "query/query.hpp"

namespace shardctl::query {

// The shard refused to run the statement: the role can do more than read, or the statement is
// no read. A usage Error, the operator's to fix, unlike the shard's own failures.
class Refusal : public Error {
 public:
  Refusal(std::string message, std::string hint = {}) : Error(ErrorKind::usage, std::move(message), std::move(hint)) {}
};

struct ReadHooks {
  // The statement's columns, before any row; throws (an Error) to refuse the shard.
  std::function<void(const std::vector<Column>&)> columns;
  std::function<void(const std::vector<Cell>&)> row;
  // True when nobody reads the output any more: the shard stops early.
  std::function<bool()> stop;
};

// Counts rows into `result.rows` (and `result.limited`). Throws an Error when the shard fails:
// unavailable when it cannot be reached or the connection drops, a Refusal before the statement
// runs, data for the statement's own failure (a missing table, a permission the role lacks,
// timeout) and for columns the hooks refuse.
void read_shard(const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result);

}  // namespace shardctl::query
