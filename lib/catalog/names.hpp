// Names the operator types: shard and map names, table names, "table(col, col)" references.
#pragma once

#include <string>
#include <vector>

namespace shardctl::catalog {

// Shard and map names: a letter or underscore, then letters, digits, _ . - (at most 63).
void require_name(const std::string& what, const std::string& name);

// "orders" -> "public.orders"; "sales.orders" stays. Each part must be a plain identifier or
// a double-quoted one. Throws a usage Error otherwise.
std::string qualify_table(const std::string& table);

// Quotes one identifier for SQL, doubling embedded quotes: order"s -> "order""s".
std::string quote_ident(const std::string& raw);

// Quotes "schema.table" for SQL: "schema"."table".
std::string quote_qualified(const std::string& qualified);

// A PostgreSQL text[] literal for a bound parameter: {"a","b\"c"} (every element quoted and
// escaped, so commas, braces and NULL spelled as text stay values).
std::string text_array_literal(const std::vector<std::string>& items);

struct TableColumns {
  std::string table;  // qualified
  std::vector<std::string> columns;
};
// Parses "public.order_lines(customer_id, order_id)".
TableColumns parse_table_columns(const std::string& text);

}  // namespace shardctl::catalog
