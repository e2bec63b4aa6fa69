// One shard's part of `shardctl query`: connect, BEGIN READ ONLY, statement_timeout, describe
// the statement's columns, then stream its rows in libpq's single-row mode (memory stays flat
// whatever the size), stop at --limit by cancelling the statement, always roll back.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/error.hpp"
#include "query/query.hpp"
#include "shardio/server_pool.hpp"

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
// What one run learns once and every shard's read then skips: the login roles that passed the
// read-only check on each server (roles belong to the server, not to a database), whether the
// statement passed the check of its kind on some shard (its text decides it), and the names of
// the server's built-in column types. Shared by the run's threads.
class RunChecks {
 public:
  bool role_passed(const std::string& login) const;  // login: server key, '\n', user
  void pass_role(const std::string& login);
  bool statement_passed() const noexcept { return statement_.load(); }
  void pass_statement() noexcept { statement_.store(true); }
  std::optional<std::string> builtin_type(const std::string& server, unsigned oid) const;
  void learn_type(const std::string& server, unsigned oid, const std::string& name);  // kept for built-in oids only

 private:
  mutable std::mutex mutex_;
  std::set<std::string> roles_;
  std::map<std::pair<std::string, unsigned>, std::string> types_;
  std::atomic<bool> statement_{false};
};

// The connection comes from `pool` (one per run: at most --parallel per server).
void read_shard(const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result,
                shardio::ServerPool& pool, RunChecks& checks);

}  // namespace shardctl::query
