#include "shardside/schema_history.hpp"

#include "shardside/sql.hpp"

namespace shardctl::shardside {

void ensure_schema_history(shardio::RawConn& conn) {
  conn.script(std::string(sql::schema_history));
  auto first_shape = conn.query(
      "SELECT (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'success' AND NOT attisdropped), "
      "NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'note' AND NOT attisdropped)");
  if (!first_shape.empty() && (first_shape[0][0] == "t" || first_shape[0][1] == "t")) conn.script(std::string(sql::schema_history_2));
}

}  // namespace shardctl::shardside
