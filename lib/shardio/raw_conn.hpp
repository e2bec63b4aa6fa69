// A raw libpq connection for what libpqxx 6.4 makes slow or impossible: streaming COPY bytes
// between servers without parsing rows. Errors name the database's role, never a password.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace shardctl::shardio {

// A transaction that lost a serialization or deadlock conflict (SQLSTATE 40001, 40P01) with a
// concurrent writer: nothing it did was kept, and running it again may succeed. When retries
// run out it is what it says, a lock another session held (75).
class ConflictError : public Error {
 public:
  explicit ConflictError(std::string message) : Error(ErrorKind::locked, std::move(message), "try again later") {}
};

// A row that a foreign key of the shard refuses (SQLSTATE 23503). An internal error (70) unless
// the caller knows what it means (a restore: the referenced row is still archived).
class ForeignKeyViolation : public Error {
 public:
  explicit ForeignKeyViolation(std::string message) : Error(ErrorKind::internal, std::move(message), "") {}
};

// A PGresult that clears itself.
struct ResultClear {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultClear>;

// A libpq error message's first line without its "ERROR:  " / "FATAL:  " prefix.
std::string libpq_message_line(const char* text);

class RawConn {
 public:
  RawConn(const std::string& dsn, std::string role);
  ~RawConn();
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  PGconn* get() const noexcept { return conn_; }
  const std::string& role() const noexcept { return role_; }

  // Ends the session and waits (at most `limit`) until the server has let go of it: its backend
  // gone from pg_stat_activity and its connection slot free. PQfinish alone returns as soon as
  // the goodbye is sent, and a connection opened right after it may meet the old backend still
  // exiting: one more than a bound on a server's connections for a moment, or a refusal for too
  // many clients of the server's own making (shardio/server_pool.hpp closes this way).
  void finish_and_wait(std::chrono::milliseconds limit) noexcept;

  // Runs ONE statement with text parameters, through the extended protocol even without any,
  // so a text that holds several statements is refused by the server instead of running them
  // all; returns the rows as text (callers select non-null values).
  std::vector<std::vector<std::string>> query(const std::string& sql, const std::vector<std::string>& params = {});
  void exec(const std::string& sql) { query(sql); }
  // Runs ONE statement (as query()) and returns the rows it affected: the count of its command
  // tag (INSERT, UPDATE, DELETE, ...), 0 for a statement without one.
  std::int64_t command(const std::string& sql, const std::vector<std::string>& params = {});
  // Runs several statements that shardctl wrote itself (session settings, DDL scripts) in one
  // round trip. Never for text from an operator or built around one.
  void script(const std::string& sql) { query_each(sql); }
  // Runs a script of statements without parameters in one round trip; returns the rows of each
  // statement that returns rows (a SELECT with none included), in order. The first error fails.
  std::vector<std::vector<std::vector<std::string>>> query_each(const std::string& script);
  std::string literal(const std::string& value) const;     // PQescapeLiteral
  std::string identifier(const std::string& value) const;  // PQescapeIdentifier

  [[noreturn]] void fail(const std::string& what) const;
  // The error of a failed result, typed by its SQLSTATE: connection lost (69), a conflict with
  // a concurrent writer (ConflictError), a write guard's refusal or a lock timeout (75), else 70.
  [[noreturn]] void fail(const PGresult* result, const std::string& what) const;

 private:
  std::string role_;
  std::string where_;
  PGconn* conn_ = nullptr;
};

// Runs `body` in a transaction on `conn` that is always rolled back: for reads that need
// transaction-local settings or temporary tables and must change nothing.
template <typename F>
void in_rolled_back_transaction(RawConn& conn, F&& body) {
  conn.exec("BEGIN");
  try {
    body();
  } catch (...) {
    try {
      conn.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
  conn.exec("ROLLBACK");
}

// Streams `COPY (...) TO STDOUT` on `from` into `COPY ... FROM STDIN` on `to`, chunk by chunk:
// rows are never parsed, memory stays flat whatever the size. Returns the bytes moved.
std::uint64_t pump_copy(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql);
// The same, showing every chunk to `observe` on its way (a migration hashes the stream).
std::uint64_t pump_copy(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql,
                        const std::function<void(std::string_view)>& observe);

// Streams `COPY (...) TO STDOUT` on `from` into `sink`, chunk by chunk (archive files).
// Returns the bytes read.
std::uint64_t copy_out_to(RawConn& from, const std::string& copy_out_sql,
                          const std::function<void(std::string_view)>& sink);

// COPY ... FROM STDIN open on `to`: shardctl's one writer of COPY data (the pumps below,
// copy_parts.hpp, archive restore). Bytes go in with put(), in any pieces; end() ends the
// statement and reads its result (the server's error fails, typed as RawConn::fail types it).
// Destroyed while open (an error on the way), it aborts the COPY: the server discards what it
// received, and the connection is ready for the caller's rollback.
class CopyIn {
 public:
  CopyIn(RawConn& to, const std::string& copy_in_sql);
  ~CopyIn();
  CopyIn(const CopyIn&) = delete;
  CopyIn& operator=(const CopyIn&) = delete;

  void put(std::string_view bytes);
  void end();

 private:
  RawConn& to_;
  bool open_ = false;
};

// Runs `COPY ... FROM STDIN` on `to` with the bytes `produce` hands to its argument. An exception
// from `produce` aborts the COPY and propagates.
void copy_in_from(RawConn& to, const std::string& copy_in_sql,
                  const std::function<void(const std::function<void(std::string_view)>&)>& produce);

}  // namespace shardctl::shardio
