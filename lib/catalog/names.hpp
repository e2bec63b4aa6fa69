// Names the operator types: shard and map names, and the one identifier syntax for tables and
// columns (PostgreSQL's own, see man shardctl(1) "IDENTIFIERS").
//
// Three forms of a table or column name:
//   input    what the operator types, SQL syntax: [schema.]table, each part unquoted (folded to
//            lower case as PostgreSQL folds it) or double-quoted (kept exactly, "" is one ").
//   raw      the actual PostgreSQL name, unquoted (Order Lines, we"ird).
//   display  raw parts quoted only where PostgreSQL needs it (public."Order Lines"). The catalog
//            stores tables in this form ("stored"): it is "schema.table" with plain parts as they
//            are, and it splits back into raw parts without ambiguity (quote_qualified,
//            split_stored) even when a part holds a dot or a quote.
#pragma once

#include <string>
#include <vector>

namespace shardctl::catalog {

// Shard and map names: a letter or underscore, then letters, digits, _ . - (at most 63).
void require_name(const std::string& what, const std::string& name);

// A table's raw parts.
struct QualifiedName {
  std::string schema;
  std::string table;
  bool operator==(const QualifiedName&) const = default;
};

// Parses operator input "[schema.]table"; a missing schema is public. Throws a usage Error
// naming the text for unbalanced quotes, empty parts, more than two parts, trailing text, a
// part over 63 bytes or bytes that are not UTF-8.
QualifiedName parse_qualified_name(const std::string& text);
// Parses operator input naming one column; the same rules, one part.
std::string parse_column_name(const std::string& text);

// Display form of one raw identifier: as it is when it is a plain lower-case identifier that is
// not an SQL keyword (PostgreSQL's quote_ident rule), else double-quoted with " doubled.
std::string display_ident(const std::string& raw);
// Display form of a table: schema.table, each part through display_ident.
std::string display_name(const QualifiedName& name);

// The catalog's form of an operator's table name: display_name(parse_qualified_name(text)).
// "Orders" -> "public.orders"; 'Sales."Order Lines"' -> 'sales."Order Lines"'.
std::string qualify_table(const std::string& table);

// Splits a name as the catalog stores it into raw parts: a double-quoted part is unquoted
// ("" -> "), a bare part is taken as it is (not folded: older catalogs stored bare mixed-case
// names that meant exactly those characters). A name without a dot has an empty schema.
QualifiedName split_stored(const std::string& stored);
// The display form of a stored name (older catalogs stored some names in other spellings).
std::string display_stored(const std::string& stored);

// Quotes one identifier for SQL, doubling embedded quotes: order"s -> "order""s".
std::string quote_ident(const std::string& raw);

// Quotes a stored "schema.table" for SQL: "schema"."table".
std::string quote_qualified(const std::string& qualified);

// A PostgreSQL text[] literal for a bound parameter: {"a","b\"c"} (every element quoted and
// escaped, so commas, braces and NULL spelled as text stay values).
std::string text_array_literal(const std::vector<std::string>& items);

struct TableColumns {
  std::string table;                 // stored form (qualify_table)
  std::vector<std::string> columns;  // raw names
};
// Parses 'public.order_lines(customer_id, order_id)' or '"Order Lines"("Tenant Id", b)'.
TableColumns parse_table_columns(const std::string& text);

}  // namespace shardctl::catalog
