#include "shardside/quarantine.hpp"

#include "shardside/names.hpp"
#include "shardside/sql.hpp"

namespace shardctl::shardside {

void ensure_quarantine(shardio::RawConn& shard) { shard.script(std::string(sql::quarantine)); }

void record_quarantined(shardio::RawConn& shard, const QuarantinedTable& table) {
  shard.query("INSERT INTO " + std::string(quarantine_schema) +
                  ".manifest (quarantine_table, source_schema, source_table) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
              {table.quarantine_table, table.source_schema, table.source_table});
}

std::vector<QuarantinedTable> quarantine_manifest(shardio::RawConn& shard) {
  std::vector<QuarantinedTable> out;
  if (shard.query("SELECT to_regclass($1) IS NOT NULL", {std::string(quarantine_schema) + ".manifest"})[0][0] != "t")
    return out;
  for (auto& r : shard.query("SELECT quarantine_table, source_schema, source_table FROM " + std::string(quarantine_schema) +
                             ".manifest ORDER BY 1"))
    out.push_back({r[0], r[1], r[2]});
  return out;
}

void drop_quarantine(shardio::RawConn& shard) { shard.exec("DROP SCHEMA " + std::string(quarantine_schema) + " CASCADE"); }

}  // namespace shardctl::shardside
