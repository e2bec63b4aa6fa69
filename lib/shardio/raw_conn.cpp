#include "shardio/raw_conn.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "pg/connect_retry.hpp"
#include "pg/dsn.hpp"
#include "pg/sqlstate.hpp"

namespace shardctl::shardio {

std::string libpq_message_line(const char* text) {
  std::string s = text ? text : "";
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  for (const char* p : {"ERROR:  ", "FATAL:  "})
    if (s.rfind(p, 0) == 0) s = s.substr(8);
  return s;
}

namespace {

std::string first_line(const char* text) { return libpq_message_line(text); }

std::vector<std::vector<std::string>> rows_of(const PGresult* r) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(static_cast<std::size_t>(PQntuples(r)));
  for (int i = 0; i < PQntuples(r); ++i) {
    std::vector<std::string> row;
    row.reserve(static_cast<std::size_t>(PQnfields(r)));
    for (int j = 0; j < PQnfields(r); ++j) row.emplace_back(PQgetvalue(r, i, j));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Read-only commands use these connections too: the hints say nothing of operations. A
// journaled operation's failure adds how to resume it, with its id (journal::failed).
constexpr const char* kLostHint = "the server went away or restarted; run the command again once it is back";

// The text a PQescape* function returned, copied and freed; none where it failed (the
// connection's error message says why).
std::optional<std::string> escaped(char* q) {
  if (!q) return std::nullopt;
  std::string out = q;
  PQfreemem(q);
  return out;
}

}  // namespace

RawConn::RawConn(const std::string& dsn, std::string role) : role_(std::move(role)), where_(pg::describe_dsn(dsn)) {
  const std::string conninfo = pg::normalize_dsn(dsn);
  // A server out of connection slots is tried again (pg/connect_retry.hpp).
  auto outcome = pg::connect_retrying(pg::retry_budget(conninfo), [&]() -> std::string {
    PGconn* c = PQconnectdb(conninfo.c_str());
    if (PQstatus(c) == CONNECTION_OK) {
      conn_ = c;
      return {};
    }
    std::string msg = c ? PQerrorMessage(c) : "out of memory";
    PQfinish(c);
    return msg.empty() ? "connection failed" : msg;
  });
  // The destructor does not run for a constructor that throws: nothing is left open here.
  if (!conn_) {
    if (outcome.refused)
      throw TooManyConnections(pg::refused_message("cannot connect to " + role_, where_, outcome), pg::refused_hint());
    throw unavailable_error("cannot connect to " + role_ + " (" + where_ + "): " + first_line(outcome.error.c_str()),
                            "is the server running and reachable? Run the command again once it is");
  }
  // Server NOTICEs ("schema already exists, skipping") are noise on an operator's terminal.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
}

RawConn::~RawConn() { PQfinish(conn_); }

void RawConn::finish_and_wait(std::chrono::milliseconds limit) noexcept {
  if (!conn_) return;
  // A second descriptor of the socket keeps it open past PQfinish: the server closes its end
  // only when its backend exits (after leaving pg_stat_activity and freeing its slot), which
  // reads here as the end of the stream.
  int fd = PQsocket(conn_) >= 0 ? ::dup(PQsocket(conn_)) : -1;
  PQfinish(conn_);
  conn_ = nullptr;
  if (fd < 0) return;
  auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[256];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;  // closed by the server
  }
  ::close(fd);
}

void RawConn::fail(const std::string& what) const {
  std::string msg = first_line(PQerrorMessage(conn_));
  if (PQstatus(conn_) != CONNECTION_OK || msg.find("server closed the connection") != std::string::npos ||
      msg.find("no connection to the server") != std::string::npos)
    throw unavailable_error("lost connection to " + role_ + " (" + where_ + ") during " + what + ": " + msg,
                            kLostHint);
  throw internal_error(what + " on " + role_ + " (" + where_ + ") failed: " + msg);
}

void RawConn::fail(const PGresult* r, const std::string& what) const {
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  std::string msg = first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  if (msg.empty()) msg = first_line(PQerrorMessage(conn_));
  // No SQLSTATE means libpq itself failed: the server went away mid-query.
  if (PQstatus(conn_) != CONNECTION_OK || !state || pg::sqlstate::connection_lost(state))
    throw unavailable_error("lost connection to " + role_ + " (" + where_ + "): " + msg, kLostHint);
  // A serialization failure or deadlock with a concurrent writer: the caller may retry (75).
  if (state == pg::sqlstate::serialization_failure || state == pg::sqlstate::deadlock_detected)
    throw ConflictError("a concurrent write on " + role_ + " (" + where_ + ") conflicted: " + msg);
  // A shardctl write guard refused the rows: an operation moves (or moved) these keys.
  if (state == pg::sqlstate::object_not_in_prerequisite_state)
    throw locked_error("rows on " + role_ + " (" + where_ + ") are held by another operation: " + msg,
                       "try again when it has finished (`shardctl op list` shows it)");
  // lock_timeout expired: another session holds a lock.
  if (state == pg::sqlstate::lock_not_available) throw locked_error("lock wait on " + role_ + " (" + where_ + ") timed out: " + msg);
  if (state == pg::sqlstate::foreign_key_violation) throw ForeignKeyViolation(what + " on " + role_ + " (" + where_ + ") failed: " + msg);
  throw internal_error(what + " on " + role_ + " (" + where_ + ") failed: " + msg);
}

std::vector<std::vector<std::string>> RawConn::query(const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
  auto status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(r.get(), "query");
  return rows_of(r.get());
}

std::int64_t RawConn::command(const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
  auto status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(r.get(), "query");
  const char* n = PQcmdTuples(r.get());
  return n[0] == '\0' ? 0 : std::stoll(n);
}

std::vector<std::vector<std::vector<std::string>>> RawConn::query_each(const std::string& script) {
  if (!PQsendQuery(conn_, script.c_str())) fail("query");
  std::vector<std::vector<std::vector<std::string>>> out;
  Result error;
  // Every result is read, so the connection is ready for the next command even after an error.
  while (PGresult* raw = PQgetResult(conn_)) {
    Result r(raw);
    auto status = PQresultStatus(r.get());
    if (status == PGRES_TUPLES_OK)
      out.push_back(rows_of(r.get()));
    else if (status != PGRES_COMMAND_OK && !error)
      error = std::move(r);
  }
  if (error) fail(error.get(), "query");
  return out;
}

std::string RawConn::literal(const std::string& value) const {
  if (auto q = escaped(PQescapeLiteral(conn_, value.c_str(), value.size()))) return *q;
  fail("quoting a value");
}

std::string RawConn::identifier(const std::string& value) const {
  if (auto q = escaped(PQescapeIdentifier(conn_, value.c_str(), value.size()))) return *q;
  fail("quoting a name");
}

std::uint64_t pump_copy(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql) {
  // The target's COPY is open while the source streams into it; a failing source aborts it.
  std::uint64_t bytes = 0;
  copy_in_from(to, copy_in_sql, [&](const auto& put) { bytes = copy_out_to(from, copy_out_sql, put); });
  return bytes;
}

std::uint64_t pump_copy(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql,
                        const std::function<void(std::string_view)>& observe) {
  std::uint64_t bytes = 0;
  copy_in_from(to, copy_in_sql, [&](const auto& put) {
    bytes = copy_out_to(from, copy_out_sql, [&](std::string_view chunk) {
      observe(chunk);
      put(chunk);
    });
  });
  return bytes;
}

std::uint64_t copy_out_to(RawConn& from, const std::string& copy_out_sql,
                          const std::function<void(std::string_view)>& sink) {
  Result out(PQexec(from.get(), copy_out_sql.c_str()));
  if (PQresultStatus(out.get()) != PGRES_COPY_OUT) from.fail(out.get(), "COPY out");
  std::uint64_t bytes = 0;
  for (;;) {
    char* buf = nullptr;
    int n = PQgetCopyData(from.get(), &buf, 0);
    if (n == -1) break;
    if (n == -2) from.fail("COPY out");
    try {
      sink({buf, static_cast<std::size_t>(n)});
    } catch (...) {
      PQfreemem(buf);
      // Drain the rest so the connection stays usable for the caller's rollback.
      for (char* rest = nullptr; PQgetCopyData(from.get(), &rest, 0) >= 0;) PQfreemem(rest);
      while (Result extra{PQgetResult(from.get())}) {
      }
      throw;
    }
    PQfreemem(buf);
    bytes += static_cast<std::uint64_t>(n);
  }
  Result done(PQgetResult(from.get()));
  if (PQresultStatus(done.get()) != PGRES_COMMAND_OK) {
    // Drain so the connection stays usable for the caller's rollback.
    while (Result extra{PQgetResult(from.get())}) {
    }
    from.fail(done.get(), "COPY out");
  }
  while (Result extra{PQgetResult(from.get())}) {
  }
  return bytes;
}

CopyIn::CopyIn(RawConn& to, const std::string& copy_in_sql) : to_(to) {
  Result in(PQexec(to_.get(), copy_in_sql.c_str()));
  if (PQresultStatus(in.get()) != PGRES_COPY_IN) to_.fail(in.get(), "COPY in");
  open_ = true;
}

CopyIn::~CopyIn() {
  if (!open_) return;
  PQputCopyEnd(to_.get(), "shardctl: the source of the rows failed");
  while (Result extra{PQgetResult(to_.get())}) {
  }
}

void CopyIn::put(std::string_view bytes) {
  // libpq gathers small pieces in its output buffer and sends them once it holds 8 kB or more.
  if (!bytes.empty() && PQputCopyData(to_.get(), bytes.data(), static_cast<int>(bytes.size())) != 1) to_.fail("COPY in");
}

void CopyIn::end() {
  open_ = false;  // whatever happens now, the statement is over: nothing is left to abort
  if (PQputCopyEnd(to_.get(), nullptr) != 1) to_.fail("COPY in");
  Result done(PQgetResult(to_.get()));
  if (PQresultStatus(done.get()) != PGRES_COMMAND_OK) {
    while (Result extra{PQgetResult(to_.get())}) {
    }
    to_.fail(done.get(), "COPY in");
  }
  while (Result extra{PQgetResult(to_.get())}) {
  }
}

void copy_in_from(RawConn& to, const std::string& copy_in_sql,
                  const std::function<void(const std::function<void(std::string_view)>&)>& produce) {
  CopyIn in(to, copy_in_sql);
  produce([&](std::string_view chunk) { in.put(chunk); });
  in.end();
}

}  // namespace shardctl::shardio
