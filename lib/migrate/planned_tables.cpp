#include <algorithm>

#include "catalog/names.hpp"
#include "migrate/operation.hpp"
#include "migrate/shard_schema.hpp"

namespace shardctl::migrate {

PlannedTable describe_table(RawConn& source, const catalog::TableDef& table) {
  std::string quoted = catalog::quote_qualified(table.name);
  PlannedTable pt{table.name, quoted, table.key_column.value_or(""), false, {}, primary_key(source, quoted)};
  for (const auto& c : table_columns(source, quoted)) pt.columns.push_back(c.name);
  return pt;
}

void sort_by_foreign_keys(RawConn& source, std::vector<PlannedTable>& tables) {
  std::vector<std::string> quoted;
  for (const auto& t : tables) quoted.push_back(t.quoted);
  auto order = fk_order(source, quoted);
  auto rank = [&](const PlannedTable& t) { return std::find(order.begin(), order.end(), t.quoted) - order.begin(); };
  std::stable_sort(tables.begin(), tables.end(),
                   [&](const PlannedTable& x, const PlannedTable& y) { return rank(x) < rank(y); });
}

}  // namespace shardctl::migrate
