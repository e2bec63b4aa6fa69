// A database session with context: every failure becomes a shardctl Error that names what
// the database is for ("catalog", "shard shard_1") and where it is, never a password.
#pragma once

#include <pqxx/pqxx>

#include <functional>
#include <memory>
#include <string>

namespace shardctl::pg {

class Connection {
 public:
  // Connects at once. `role` is how messages name it: "catalog", "shard shard_1".
  // Throws an unavailable Error (exit 69) when the server cannot be reached.
  Connection(const std::string& dsn, std::string role);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  pqxx::connection& raw() noexcept { return *conn_; }
  const std::string& role() const noexcept { return role_; }
  const std::string& where() const noexcept { return where_; }

  // Runs `body` in a transaction (committed when it returns), translating database errors.
  void transact(const std::function<void(pqxx::work&)>& body);
  // Same, read-only intent, nothing to commit.
  void read(const std::function<void(pqxx::work&)>& body);

 private:
  std::string role_;
  std::string where_;
  std::unique_ptr<pqxx::connection> conn_;
};

// Translates the exception in flight (call from a catch block) into a shardctl Error that
// names `role` and `where`. Constraint violations become usage Errors with the server's
// detail; connection loss becomes unavailable; anything else internal.
[[noreturn]] void rethrow_as_error(const std::string& role, const std::string& where);

}  // namespace shardctl::pg
