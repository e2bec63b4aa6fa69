#include "query/shard_reader.hpp"

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "pg/dsn.hpp"
#include "pg/sqlstate.hpp"
#include "query/read_role.hpp"
#include "query/statement.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::query {
namespace {

using shardio::Result;
std::string first_line(const char* text) { return shardio::libpq_message_line(text); }


std::string sqlstate(const PGresult* r) {
  const char* s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  return s ? s : "";
}

// Whether the connection is gone: libpq says so, no SQLSTATE came (libpq failed, not the
// server), or the server said it is going away.
bool connection_lost(PGconn* conn, const std::string& state) {
  return PQstatus(conn) != CONNECTION_OK || state.empty() || pg::sqlstate::connection_lost(state);
}

// The statement's own failure, or a lost connection.
[[noreturn]] void fail(PGconn* conn, const PGresult* r, const std::string& shard, const std::string& what) {
  std::string msg = first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
  if (msg.empty()) msg = first_line(PQerrorMessage(conn));
  if (connection_lost(conn, sqlstate(r)))
    throw unavailable_error("lost connection to shard " + shard + " during " + what + ": " + msg);
  throw data_error(msg);
}

// A named statement: the unnamed one is taken by every PQexecParams in between.
constexpr const char* kStatement = "shardctl_query";

std::string oid_array(const std::vector<Column>& columns) {
  std::string out = "{";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(columns[i].oid);
  }
  out += '}';
  return out;
}

// Refuses (usage Error) a login that can do more than read, unless the options allow it.
void check_role(PGconn* conn, const fanout::Target& target, const Options& options) {
  if (options.allow_privileged) return;
  Result r(PQexec(conn, member_roles_sql));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) fail(conn, r.get(), target.shard, "reading the roles of its login");
  std::vector<MemberRole> roles;
  std::string login = PQuser(conn);
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    roles.push_back({PQgetvalue(r.get(), i, 0), PQgetvalue(r.get(), i, 1)[0] == 't', PQgetvalue(r.get(), i, 2)[0] == 't'});
    login = PQgetvalue(r.get(), i, 3);
  }
  if (auto why = privilege_refusal(login, roles))
    throw Refusal("shard " + target.shard + ": role \"" + printable(login) + "\" can do more than read (" + *why + ")",
                  read_role_hint());
}

// The statement's parse on the server (one statement, no parameters) and what kind it is
// (statement.hpp): a refusal is a usage Error, the same on every shard; any other failure
// (a table this shard lacks) is the shard's.
void check_statement(PGconn* conn, const fanout::Target& target, const Options& options) {
  {
    Result r(PQprepare(conn, kStatement, options.sql.c_str(), 0, nullptr));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      std::string state = sqlstate(r.get());
      if (state == pg::sqlstate::syntax_error || state == pg::sqlstate::indeterminate_datatype)
        throw Refusal("the statement does not parse: " + first_line(PQresultErrorMessage(r.get())));
      fail(conn, r.get(), target.shard, "parsing the statement");
    }
  }
  {
    Result d(PQdescribePrepared(conn, kStatement));
    if (PQresultStatus(d.get()) != PGRES_COMMAND_OK) fail(conn, d.get(), target.shard, "describing the statement");
    if (PQnparams(d.get()) > 0) throw Refusal("the statement has parameters ($1 ...), which query has no values for");
  }
  Shape shape = read_shape(options.sql);
  if (shape.kind == StatementKind::show) return;
  std::string select = options.sql.substr(shape.explained);
  Result r(PQprepare(conn, "", select_check_sql(select).c_str(), 0, nullptr));
  if (PQresultStatus(r.get()) == PGRES_COMMAND_OK) return;
  std::string state = sqlstate(r.get());
  if (connection_lost(conn, state)) fail(conn, r.get(), target.shard, "parsing the statement");
  throw Refusal(select_refusal(shape, state, first_line(PQresultErrorMessage(r.get()))), statement_hint());
}

// Runs a statement whose rows nobody reads (BEGIN, ROLLBACK); `what` names it in errors.
void exec(PGconn* conn, const fanout::Target& target, const std::string& sql, const std::string& what) {
  Result r(PQexec(conn, sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)
    fail(conn, r.get(), target.shard, what);
}

// READ ONLY refuses every write to a table, also one hidden in a function; the transaction is
// rolled back however the statement ends, so nothing it did in the database could stay. What
// reaches beyond the database is the role's to refuse (check_role).
void begin_read_only(PGconn* conn, const fanout::Target& target, const Options& options) {
  exec(conn, target, "BEGIN READ ONLY", "BEGIN");
  // standard_conforming_strings on: the statement is read (statement.hpp) as it is parsed.
  std::string ms = std::to_string(std::max<std::int64_t>(1, options.timeout.count())) + "ms";
  const char* values[] = {ms.c_str()};
  Result r(PQexecParams(conn,
                        "SELECT pg_catalog.set_config('statement_timeout', $1, true), "
                        "pg_catalog.set_config('standard_conforming_strings', 'on', true)",
                        1, nullptr, values, nullptr, nullptr, 0));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) fail(conn, r.get(), target.shard, "setting statement_timeout");
}

// The prepared statement's columns, with their types' names: not OIDs, a user type has a
// different OID on every shard.
std::vector<Column> statement_columns(PGconn* conn, const fanout::Target& target) {
  std::vector<Column> columns;
  {
    Result d(PQdescribePrepared(conn, kStatement));
    if (PQresultStatus(d.get()) != PGRES_COMMAND_OK) fail(conn, d.get(), target.shard, "describing the statement");
    for (int i = 0; i < PQnfields(d.get()); ++i) columns.push_back({PQfname(d.get(), i), "", PQftype(d.get(), i)});
  }
  if (columns.empty()) return columns;
  std::string oids = oid_array(columns);
  const char* values[] = {oids.c_str()};
  Result r(PQexecParams(conn,
                        "SELECT pg_catalog.format_type(t, NULL) "
                        "FROM pg_catalog.unnest($1::pg_catalog.oid[]) WITH ORDINALITY u(t, n) ORDER BY n",
                        1, nullptr, values, nullptr, nullptr, 0));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != static_cast<int>(columns.size()))
    fail(conn, r.get(), target.shard, "reading the column types");
  for (std::size_t i = 0; i < columns.size(); ++i) columns[i].type = PQgetvalue(r.get(), static_cast<int>(i), 0);
  return columns;
}

// The prepared statement's rows, streamed in single-row mode into the hooks, until the statement
// ends, fails, or is cancelled because --limit is reached or nobody reads the output any more.
class RowStream {
 public:
  RowStream(PGconn* conn, const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result)
      : conn_(conn), target_(target), options_(options), hooks_(hooks), result_(result) {}

  // Reads every result of the statement. Throws unavailable when the connection was lost;
  // returns the statement's own failure, if any, for after the rollback.
  std::optional<std::string> read() {
    if (!PQsendQueryPrepared(conn_, kStatement, 0, nullptr, nullptr, nullptr, 0))
      fail(conn_, nullptr, target_.shard, "sending the statement");
    if (!PQsetSingleRowMode(conn_)) fail(conn_, nullptr, target_.shard, "switching to single-row mode");
    while (Result r{PQgetResult(conn_)}) {
      auto status = PQresultStatus(r.get());
      if (status == PGRES_SINGLE_TUPLE) {
        row(r.get());
      } else if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        failed(r.get());
      }
      // TUPLES_OK, COMMAND_OK: it ended on its own; no row was left out unless one came after the limit.
    }
    if (lost_) throw unavailable_error("lost connection to shard " + target_.shard + ": " + error_.value_or("no answer"));
    return error_;
  }

 private:
  // Why this shard's statement was cancelled.
  enum class Cancel { none, at_limit, output_closed };

  void row(const PGresult* r) {
    if (cancel_ != Cancel::none) {  // on their way before the cancel arrived: there were more rows
      result_.limited = cancel_ == Cancel::at_limit;
      return;
    }
    int n = PQnfields(r);
    cells_.assign(static_cast<std::size_t>(n), std::nullopt);
    for (int j = 0; j < n; ++j)
      if (!PQgetisnull(r, 0, j))
        cells_[static_cast<std::size_t>(j)] = std::string_view(PQgetvalue(r, 0, j), static_cast<std::size_t>(PQgetlength(r, 0, j)));
    hooks_.row(cells_);
    ++result_.rows;
    if (options_.limit && result_.rows >= *options_.limit)
      cancel(Cancel::at_limit);
    else if (hooks_.stop && hooks_.stop())
      cancel(Cancel::output_closed);
  }

  void failed(const PGresult* r) {
    std::string state = sqlstate(r);
    // 57014 after our own cancel is the stop we asked for, not a failure; the statement had not
    // ended, so rows may have been left out.
    if (cancel_ != Cancel::none && state == pg::sqlstate::query_canceled) {
      result_.limited = cancel_ == Cancel::at_limit;
      return;
    }
    if (PQstatus(conn_) != CONNECTION_OK || state.empty()) lost_ = true;
    try {
      fail(conn_, r, target_.shard, "the statement");
    } catch (const Error& e) {
      error_ = e.what();
      if (state == pg::sqlstate::query_canceled && cancel_ == Cancel::none)
        *error_ += " (--timeout " + std::to_string(options_.timeout.count()) + "ms)";
    }
  }

  // Asks the server to stop the running statement. What it sends back afterwards (rows already
  // on the way, then "canceling statement") is drained by read().
  void cancel(Cancel why) {
    cancel_ = why;
    PGcancel* c = PQgetCancel(conn_);
    if (!c) return;
    char err[256];
    PQcancel(c, err, sizeof err);
    PQfreeCancel(c);
  }

  PGconn* conn_;
  const fanout::Target& target_;
  const Options& options_;
  const ReadHooks& hooks_;
  ShardResult& result_;
  Cancel cancel_ = Cancel::none;
  std::optional<std::string> error_;  // the statement's failure, kept until the results are drained
  bool lost_ = false;
  std::vector<Cell> cells_;
};

}  // namespace

void read_shard(const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result) {
  std::string dsn = fanout::dsn_with_timeout(target.dsn, options.connect_timeout);
  if (options.user) dsn = dsn_with_user(dsn, *options.user);
  shardio::RawConn raw(dsn, "shard " + target.shard);
  PGconn* conn = raw.get();
  check_role(conn, target, options);
  begin_read_only(conn, target, options);
  // The extended protocol takes exactly one statement: `SELECT 1; DELETE ...` is refused.
  check_statement(conn, target, options);
  hooks.columns(statement_columns(conn, target));
  std::optional<std::string> error;
  if (!options.limit || *options.limit > 0) error = RowStream(conn, target, options, hooks, result).read();
  exec(conn, target, "ROLLBACK", "ROLLBACK");
  if (error) throw data_error(*error);
}

}  // namespace shardctl::query
