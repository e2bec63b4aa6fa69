// The sandbox's read role (sandbox.hpp: read_role), so that `shardctl query` runs in the
// sandbox as it should anywhere: as a role that can only read.
#include "pg/connection.hpp"
#include "sandbox/sandbox.hpp"

namespace shardctl::sandbox {

void Sandbox::ensure_read_role() const {
  for (const auto& c : status()) {
    if (!c.running) continue;
    pg::Connection conn(dsn(c, "postgres"), "sandbox cluster " + c.name);
    pqxx::nontransaction tx(conn.raw());
    // One statement, so that a GRANT never repeats (its notice would reach the terminal).
    tx.exec(std::string("DO $$ BEGIN "
                        "IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = '") + read_role + "') THEN "
            "CREATE ROLE " + tx.quote_name(read_role) + " LOGIN; "
            "GRANT pg_read_all_data TO " + tx.quote_name(read_role) + "; "
            "END IF; END $$");
  }
}

}  // namespace shardctl::sandbox
