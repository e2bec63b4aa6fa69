#include "query/shard_reader.hpp"

#include <libpq-fe.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "pg/dsn.hpp"
#include "pg/sqlstate.hpp"
#include "query/read_role.hpp"
#include "query/statement.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/server_pool.hpp"

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

// Refuses (usage Error) a login that can do more than read: `r` is member_roles_sql's result.
void check_role(PGconn* conn, const PGresult* r, const fanout::Target& target) {
  std::vector<MemberRole> roles;
  std::string login = PQuser(conn);
  for (int i = 0; i < PQntuples(r); ++i) {
    roles.push_back({PQgetvalue(r, i, 0), PQgetvalue(r, i, 1)[0] == 't', PQgetvalue(r, i, 2)[0] == 't'});
    login = PQgetvalue(r, i, 3);
  }
  if (auto why = privilege_refusal(login, roles))
    throw Refusal("shard " + target.shard + ": role \"" + printable(login) + "\" can do more than read (" + *why + ")",
                  read_role_hint());
}

// One command of the opening pipeline: what it is for, in errors.
struct Sent {
  enum What { begin, settings, roles, prepare, describe, check } what;
};

// The results of the commands sent in one pipeline, in order (one each; null where a command
// gave none), up to its sync.
std::vector<Result> pipeline_results(PGconn* conn, std::size_t commands, const fanout::Target& target) {
  if (!PQpipelineSync(conn)) fail(conn, nullptr, target.shard, "sending the statement");
  std::vector<Result> out(commands);
  std::size_t k = 0;
  for (std::size_t nulls = 0; nulls <= commands + 1;) {
    Result r(PQgetResult(conn));
    if (!r) {
      ++nulls;
      ++k;
      if (PQstatus(conn) != CONNECTION_OK) break;
      continue;
    }
    if (PQresultStatus(r.get()) == PGRES_PIPELINE_SYNC) break;
    if (k < commands && !out[k]) out[k] = std::move(r);
  }
  if (PQstatus(conn) != CONNECTION_OK || !PQexitPipelineMode(conn)) fail(conn, nullptr, target.shard, "sending the statement");
  return out;
}

// Opens the shard's read in ONE round trip, a pipeline of: BEGIN READ ONLY (READ ONLY refuses
// every write to a table, also one hidden in a function; the transaction is rolled back however
// the statement ends, so nothing it did in the database could stay), its settings, the login's
// roles (what reaches beyond the database is the role's to refuse: check_role), the statement
// prepared (the extended protocol takes exactly one statement: `SELECT 1; DELETE ...` is
// refused) and described, and the check of what kind of statement it is (statement.hpp). A
// refusal is a usage Error, the same on every shard; any other failure (a table this shard
// lacks) is the shard's. The roles are the server's, not the database's: they are read on the
// first shard of each server only; the statement's kind is its text's, checked until one shard
// has passed it. Returns the statement's description.
Result open_statement(PGconn* conn, const fanout::Target& target, const Options& options, RunChecks& checks,
                      const std::string& server) {
  Shape shape = read_shape(options.sql);
  const std::string login = std::string(server) + '\n' + PQuser(conn);
  const bool read_roles = !options.allow_privileged && !checks.role_passed(login);
  const bool check_kind = shape.kind != StatementKind::show && !checks.statement_passed();
  std::string select = check_kind ? select_check_sql(options.sql.substr(shape.explained)) : std::string();
  // standard_conforming_strings on: the statement is read (statement.hpp) as it is parsed.
  std::string timeout = std::to_string(std::max<std::int64_t>(1, options.timeout.count())) + "ms";
  const char* settings_values[] = {timeout.c_str()};
  std::vector<Sent::What> sent{Sent::begin, Sent::settings};
  if (!PQenterPipelineMode(conn)) fail(conn, nullptr, target.shard, "sending the statement");
  bool ok = PQsendQueryParams(conn, "BEGIN READ ONLY", 0, nullptr, nullptr, nullptr, nullptr, 0) &&
            PQsendQueryParams(conn,
                              "SELECT pg_catalog.set_config('statement_timeout', $1, true), "
                              "pg_catalog.set_config('standard_conforming_strings', 'on', true)",
                              1, nullptr, settings_values, nullptr, nullptr, 0);
  if (ok && read_roles) {
    ok = PQsendQueryParams(conn, member_roles_sql, 0, nullptr, nullptr, nullptr, nullptr, 0);
    sent.push_back(Sent::roles);
  }
  ok = ok && PQsendPrepare(conn, kStatement, options.sql.c_str(), 0, nullptr) && PQsendDescribePrepared(conn, kStatement);
  sent.push_back(Sent::prepare);
  sent.push_back(Sent::describe);
  if (ok && check_kind) {
    ok = PQsendPrepare(conn, "", select.c_str(), 0, nullptr);
    sent.push_back(Sent::check);
  }
  if (!ok) fail(conn, nullptr, target.shard, "sending the statement");
  auto results = pipeline_results(conn, sent.size(), target);
  Result described;
  for (std::size_t k = 0; k < sent.size(); ++k) {
    const PGresult* r = results[k].get();
    auto status = PQresultStatus(r);
    switch (sent[k]) {
      case Sent::begin:
        if (status != PGRES_COMMAND_OK) fail(conn, r, target.shard, "BEGIN");
        break;
      case Sent::settings:
        if (status != PGRES_TUPLES_OK) fail(conn, r, target.shard, "setting statement_timeout");
        break;
      case Sent::roles:
        if (status != PGRES_TUPLES_OK) fail(conn, r, target.shard, "reading the roles of its login");
        check_role(conn, r, target);
        checks.pass_role(login);
        break;
      case Sent::prepare:
        if (status != PGRES_COMMAND_OK) {
          std::string state = sqlstate(r);
          if (state == pg::sqlstate::syntax_error || state == pg::sqlstate::indeterminate_datatype)
            throw Refusal("the statement does not parse: " + first_line(PQresultErrorMessage(r)));
          fail(conn, r, target.shard, "parsing the statement");
        }
        break;
      case Sent::describe:
        if (status != PGRES_COMMAND_OK) fail(conn, r, target.shard, "describing the statement");
        if (PQnparams(r) > 0) throw Refusal("the statement has parameters ($1 ...), which query has no values for");
        described = std::move(results[k]);
        break;
      case Sent::check: {
        if (status == PGRES_COMMAND_OK) {
          checks.pass_statement();
          break;
        }
        std::string state = sqlstate(r);
        if (connection_lost(conn, state)) fail(conn, r, target.shard, "parsing the statement");
        throw Refusal(select_refusal(shape, state, first_line(PQresultErrorMessage(r))), statement_hint());
      }
    }
  }
  return described;
}

// Runs a statement whose rows nobody reads (ROLLBACK); `what` names it in errors.
void exec(PGconn* conn, const fanout::Target& target, const std::string& sql, const std::string& what) {
  Result r(PQexec(conn, sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)
    fail(conn, r.get(), target.shard, what);
}

// The described statement's columns, with their types' names: not OIDs, a user type has a
// different OID on every shard. The names of built-in types are the server's, known after the
// first shard of each server; the others are read on every shard.
std::vector<Column> statement_columns(PGconn* conn, const PGresult* described, const fanout::Target& target,
                                      RunChecks& checks, const std::string& server) {
  std::vector<Column> columns;
  std::vector<Column> unknown;
  for (int i = 0; i < PQnfields(described); ++i) {
    Column c{PQfname(described, i), "", PQftype(described, i)};
    if (auto name = checks.builtin_type(server, c.oid)) c.type = *name;
    else unknown.push_back(c);
    columns.push_back(std::move(c));
  }
  if (unknown.empty()) return columns;
  std::string oids = oid_array(unknown);
  const char* values[] = {oids.c_str()};
  Result r(PQexecParams(conn,
                        "SELECT pg_catalog.format_type(t, NULL) "
                        "FROM pg_catalog.unnest($1::pg_catalog.oid[]) WITH ORDINALITY u(t, n) ORDER BY n",
                        1, nullptr, values, nullptr, nullptr, 0));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != static_cast<int>(unknown.size()))
    fail(conn, r.get(), target.shard, "reading the column types");
  std::map<unsigned, std::string> names;
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    names[unknown[i].oid] = PQgetvalue(r.get(), static_cast<int>(i), 0);
    checks.learn_type(server, unknown[i].oid, names[unknown[i].oid]);
  }
  for (auto& c : columns)
    if (c.type.empty()) c.type = names[c.oid];
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

bool RunChecks::role_passed(const std::string& login) const {
  std::lock_guard lock(mutex_);
  return roles_.count(login) > 0;
}

void RunChecks::pass_role(const std::string& login) {
  std::lock_guard lock(mutex_);
  roles_.insert(login);
}

std::optional<std::string> RunChecks::builtin_type(const std::string& server, unsigned oid) const {
  std::lock_guard lock(mutex_);
  auto it = types_.find({server, oid});
  if (it == types_.end()) return std::nullopt;
  return it->second;
}

void RunChecks::learn_type(const std::string& server, unsigned oid, const std::string& name) {
  // Objects created by initdb have oids below FirstNormalObjectId (16384), the same in every
  // database of a server; a user's type has another oid in each.
  if (oid >= 16384) return;
  std::lock_guard lock(mutex_);
  types_.emplace(std::pair{server, oid}, name);
}

void read_shard(const fanout::Target& target, const Options& options, const ReadHooks& hooks, ShardResult& result,
                shardio::ServerPool& pool, RunChecks& checks) {
  std::string dsn = fanout::dsn_with_timeout(target.dsn, options.connect_timeout);
  if (options.user) dsn = dsn_with_user(dsn, *options.user);
  const std::string server = pg::server_key(dsn);
  auto lease = pool.acquire(dsn, "shard " + target.shard);
  PGconn* conn = lease->get();
  std::optional<std::string> error;
  try {
    auto described = open_statement(conn, target, options, checks, server);
    hooks.columns(statement_columns(conn, described.get(), target, checks, server));
    if (!options.limit || *options.limit > 0) error = RowStream(conn, target, options, hooks, result).read();
    // The prepared statement goes with the transaction, so the connection serves the next
    // shard of its database as new.
    exec(conn, target, std::string("ROLLBACK; DEALLOCATE ") + kStatement, "ROLLBACK");
  } catch (...) {
    lease.discard();  // in a transaction, a pipeline or holding the statement: not for reuse
    throw;
  }
  if (error) throw data_error(*error);
}

}  // namespace shardctl::query
