// Creating and upgrading the catalog schema.
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/locks.hpp"
#include "catalog/schema.hpp"
#include "catalog/schema_routing.hpp"
#include "core/error.hpp"
#include "pg/dsn.hpp"

namespace shardctl::catalog {

int read_catalog_version(pqxx::work& tx) {
  auto exists = tx.exec1("SELECT to_regclass('shardctl.catalog_version') IS NOT NULL");
  if (!exists[0].as<bool>()) return 0;
  auto r = tx.exec("SELECT version FROM shardctl.catalog_version");
  return r.empty() ? 0 : r[0][0].as<int>();
}

void refuse_newer(int found) {
  if (found > schema_version)
    throw data_error("the catalog has schema version " + std::to_string(found) +
                         ", newer than this shardctl understands (" + std::to_string(schema_version) + ")",
                     "upgrade shardctl; an older binary must not write to a newer catalog");
}

InitResult init_catalog(pg::Connection& conn, Writes writes) {
  InitResult result{0, schema_version};
  conn.transact([&](pqxx::work& tx) {
    // Two concurrent `init` runs queue here instead of both creating the schema. Nothing else
    // waits on this lock, so blocking is safe (it is released at commit).
    tx.exec_params("SELECT pg_advisory_xact_lock($1, $2)", lock_class, lock_init);
    result.previous_version = read_catalog_version(tx);
    refuse_newer(result.previous_version);
    std::vector<std::pair<std::string, std::string>> scrub;  // name, DSN without its password
    if (result.previous_version > 0)
      for (const auto& row : tx.exec("SELECT name, dsn FROM shardctl.shards ORDER BY name")) {
        auto dsn = row[1].as<std::string>();
        try {
          if (pg::dsn_has_password(dsn)) scrub.emplace_back(row[0].as<std::string>(), pg::redact_dsn(dsn));
        } catch (const Error&) {
          // A DSN libpq cannot parse is reported where it is used; nothing to take out here.
        }
      }
    for (const auto& [name, clean] : scrub) result.passwords_removed.push_back(name);
    if (writes == Writes::preview) return;
    for (const auto& [name, clean] : scrub)
      tx.exec_params("UPDATE shardctl.shards SET dsn = $2 WHERE name = $1", name, clean);
    for (const auto& step : schema_steps()) {
      if (step.version <= result.previous_version) continue;
      tx.exec(std::string(step.sql));
    }
    if (result.previous_version != schema_version)
      tx.exec_params(
          "INSERT INTO shardctl.catalog_version (version) VALUES ($1) "
          "ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version, upgraded_at = now()",
          schema_version);
  });
  return result;
}

std::vector<std::string> grant_routing(pg::Connection& conn, const std::string& role, Writes writes) {
  std::vector<std::string> statements;
  conn.transact([&](pqxx::work& tx) {
    if (tx.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", role).empty())
      throw usage_error("--grant-routing: no role '" + role + "' in " + conn.where(),
                        "create it first (CREATE ROLE ... LOGIN), then run `shardctl init --grant-routing` again");
    std::string who = tx.quote_name(role);
    std::string functions;
    for (auto f : routing_functions) functions += (functions.empty() ? "" : ", ") + std::string(f);
    statements = {"GRANT USAGE ON SCHEMA shardctl TO " + who, "GRANT EXECUTE ON FUNCTION " + functions + " TO " + who};
    if (writes == Writes::preview) return;
    for (const auto& s : statements) tx.exec(s);
  });
  return statements;
}

}  // namespace shardctl::catalog
