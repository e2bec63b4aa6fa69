#include "shardside/subscription_probe.hpp"

#include <string_view>

#include "pg/dsn.hpp"

namespace shardctl::shardside {
namespace {

// Never committed, and no shardctl_op_ prefix: no operation owns it and no listing finds it.
constexpr const char* probe_name = "shardctl_connection_probe";

}  // namespace

std::optional<std::string> subscription_connect_error(shardio::RawConn& target, const std::string& source_dsn) {
  // With create_slot = false the statement may run in a transaction block; the connection
  // string is normalized as create_subscription() normalizes it (connect_timeout included).
  const std::string sql = "CREATE SUBSCRIPTION " + target.identifier(probe_name) + " CONNECTION " +
                          target.literal(pg::normalize_dsn(source_dsn)) + " PUBLICATION " +
                          target.identifier(probe_name) +
                          " WITH (connect = true, create_slot = false, slot_name = NONE, enabled = false, "
                          "copy_data = false)";
  std::optional<std::string> error;
  shardio::in_rolled_back_transaction(target, [&] {
    shardio::Result r(PQexecParams(target.get(), sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0));
    auto status = PQresultStatus(r.get());
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    // Class 08 with this session still up: the target's server failed to reach the source.
    const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
    if (state && std::string_view(state).starts_with("08") && PQstatus(target.get()) == CONNECTION_OK) {
      error = shardio::libpq_message_line(PQresultErrorMessage(r.get()));
      return;
    }
    target.fail(r.get(), "CREATE SUBSCRIPTION (a connection test)");
  });
  return error;
}

}  // namespace shardctl::shardside
