#include "catalog/names.hpp"
#include "migrate/operation.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::migrate {

PlannedTable describe_table(shardio::RawConn& source, const catalog::TableDef& table, routing::MapKind kind) {
  std::string quoted = catalog::quote_qualified(table.name);
  PlannedTable pt{table.name, quoted, table.key_column.value_or(""), false, {}, shardio::primary_key(source, quoted)};
  for (const auto& c : shardio::table_columns(source, quoted)) {
    pt.columns.push_back(c.name);
    pt.types.push_back(c.type);
    pt.not_null.push_back(c.not_null);
  }
  // Comparing (or hashing) in the column's own collation lets an ordinary btree on the key (or
  // an index on hashtextextended(k, 0)) serve every batch statement; only sound when that
  // collation gives the answers of bytes (finish_plan also requires it of the target).
  pt.key_own_collation = shardio::own_collation_fits(source, quoted, pt.key_column, kind);
  pt.binary = shardio::binary_copy_is_portable(source, quoted);
  return pt;
}

void sort_by_foreign_keys(shardio::RawConn& source, std::vector<PlannedTable>& tables) {
  shardio::sort_parents_first(source, tables, [](const PlannedTable& t) { return t.quoted; });
}

void sort_references_by_foreign_keys(shardio::RawConn& source, std::vector<std::string>& quoted_refs) {
  shardio::sort_parents_first(source, quoted_refs, [](const std::string& t) { return t; });
}

}  // namespace shardctl::migrate
