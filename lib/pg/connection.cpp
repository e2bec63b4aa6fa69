#include "pg/connection.hpp"

#include <string>

#include "core/error.hpp"
#include "pg/connect_retry.hpp"
#include "pg/dsn.hpp"
#include "pg/sqlstate.hpp"

namespace shardctl::pg {
namespace {

std::string first_line(std::string text) {
  auto nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string strip_severity(std::string text) {
  for (const char* prefix : {"ERROR:  ", "FATAL:  "})
    if (text.rfind(prefix, 0) == 0) return text.substr(std::string(prefix).size());
  return text;
}

}  // namespace

Connection::Connection(const std::string& dsn, std::string role)
    : role_(std::move(role)), where_(describe_dsn(dsn)) {
  const std::string conninfo = normalize_dsn(dsn);
  // A server out of connection slots is tried again (connect_retry.hpp); any other failure is
  // reported at once, as it always was.
  auto outcome = connect_retrying(retry_budget(conninfo), [&]() -> std::string {
    try {
      conn_ = std::make_unique<pqxx::connection>(conninfo);
      return {};
    } catch (const pqxx::broken_connection& e) {
      return e.what();
    }
  });
  if (!conn_) {
    if (outcome.refused)
      throw TooManyConnections(refused_message("cannot connect to " + role_, where_, outcome), refused_hint());
    throw unavailable_error(
        "cannot connect to " + role_ + " (" + where_ + "): " + first_line(outcome.error),
        "is the server running and the connection string right? credentials come from "
        "~/.pgpass, PGPASSFILE or a service file");
  }
  try {
    // A silently re-opened connection would lose advisory locks and session settings.
    // libpqxx 6.4 marks this deprecated (7.0 drops reactivation altogether) but it is the only
    // way to turn reactivation off in the version Debian ships.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    conn_->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    // Catalog changes (a flipped mapping, a journaled step) must survive a server crash once
    // committed, whatever the server's default.
    pqxx::nontransaction(*conn_).exec("SET synchronous_commit = on");
  } catch (const pqxx::broken_connection& e) {
    throw unavailable_error(
        "cannot connect to " + role_ + " (" + where_ + "): " + first_line(e.what()),
        "is the server running and the connection string right? credentials come from "
        "~/.pgpass, PGPASSFILE or a service file");
  }
}

void Connection::transact(const std::function<void(pqxx::work&)>& body) {
  try {
    pqxx::work tx(*conn_);
    body(tx);
    tx.commit();
  } catch (const Error&) {
    throw;
  } catch (...) {
    rethrow_as_error(role_, where_);
  }
}

void Connection::read(const std::function<void(pqxx::work&)>& body) {
  try {
    pqxx::work tx(*conn_);
    body(tx);
  } catch (const Error&) {
    throw;
  } catch (...) {
    rethrow_as_error(role_, where_);
  }
}

void rethrow_as_error(const std::string& role, const std::string& where) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const pqxx::broken_connection& e) {
    throw unavailable_error("lost connection to " + role + " (" + where + "): " +
                            first_line(e.what()));
  } catch (const pqxx::integrity_constraint_violation& e) {
    throw usage_error(role + " refused the change: " + strip_severity(first_line(e.what())));
  } catch (const pqxx::sql_error& e) {
    std::string msg = strip_severity(first_line(e.what()));
    const std::string& state = e.sqlstate();
    if (sqlstate::connection_lost(state))
      throw unavailable_error("lost connection to " + role + " (" + where + "): " + msg);
    if (state == sqlstate::lock_not_available || state == sqlstate::deadlock_detected)
      throw locked_error(role + " is busy: " + msg, "another operation holds the lock; try again later");
    throw internal_error("query on " + role + " (" + where + ") failed: " + msg);
  } catch (const pqxx::in_doubt_error& e) {
    throw unavailable_error("commit on " + role + " is in doubt: " + first_line(e.what()));
  } catch (const std::exception& e) {
    throw internal_error("on " + role + ": " + first_line(e.what()));
  }
}

}  // namespace shardctl::pg
