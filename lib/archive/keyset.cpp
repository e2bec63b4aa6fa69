#include "archive/keyset.hpp"

#include "catalog/names.hpp"

namespace shardctl::archive {
using catalog::quote_ident;
namespace {

// "($1::bigint, $2::text)" for the key's columns, numbered from `first`.
std::string params_row(const std::vector<KeyColumn>& key, int first) {
  // Appends one piece at a time: GCC 12 at -O3 warns falsely (-Wrestrict) on chains of +.
  std::string out = "(";
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += '$';
    out += std::to_string(first + static_cast<int>(i));
    out += "::";
    out += key[i].type;
  }
  out += ')';
  return out;
}

}  // namespace

std::string Keyset::key_order() const {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += quote_ident(key[i].name);
  }
  return out;
}

std::string Keyset::key_order_desc() const {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += quote_ident(key[i].name);
    out += " DESC";
  }
  return out;
}

// A row value compares column by column, in the order of a composite primary key's index, so
// "(a, b) > ($1, $2)" is one index range condition.
std::string Keyset::key_row() const {
  std::string out = "(";
  out += key_order();
  out += ')';
  return out;
}

std::string Keyset::upper_bound_sql() const {
  return "SELECT " + key_order() + " FROM " + table + " ORDER BY " + key_order_desc() + " LIMIT 1";
}

std::string Keyset::batch_filter(bool has_cursor, int first) const {
  int n = static_cast<int>(key.size());
  std::string where;
  if (has_cursor) where = key_row() + " > " + params_row(key, first) + " AND ";
  where += key_row() + " <= " + params_row(key, has_cursor ? first + n : first);
  return where + " AND (" + predicate + ")";
}

std::string Keyset::range_filter(const std::string* low_row, const std::string& high_row) const {
  std::string where;
  if (low_row) {
    where += key_row();
    where += " > ";
    where += *low_row;
    where += " AND ";
  }
  where += key_row();
  where += " <= ";
  where += high_row;
  where += " AND (";
  where += predicate;
  where += ')';
  return where;
}

std::string Keyset::literal_row(const std::vector<std::string>& quoted_values) const {
  std::string out = "(";
  for (std::size_t i = 0; i < key.size() && i < quoted_values.size(); ++i) {
    if (i) out += ", ";
    out += quoted_values[i];
    out += "::";
    out += key[i].type;
  }
  out += ')';
  return out;
}

std::string Keyset::batch_end_sql(bool has_cursor) const {
  int n = static_cast<int>(key.size());
  int limit_param = (has_cursor ? 2 * n : n) + 1;
  // The inner query reads at most N index entries in key order; the outer one keeps the last.
  return "SELECT " + key_order() + " FROM (SELECT " + key_order() + " FROM " + table + " WHERE " +
         batch_filter(has_cursor) + " ORDER BY " + key_order() + " LIMIT $" + std::to_string(limit_param) +
         ") AS batch ORDER BY " + key_order_desc() + " LIMIT 1";
}

}  // namespace shardctl::archive
