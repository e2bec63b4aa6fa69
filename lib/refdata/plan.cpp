#include "refdata/plan.hpp"

#include <algorithm>

#include "core/dependency_order.hpp"
#include "core/error.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::refdata {

std::int64_t chunk_count(std::int64_t estimated_rows) noexcept {
  if (estimated_rows <= rows_per_chunk) return 1;
  std::int64_t n = (estimated_rows + rows_per_chunk - 1) / rows_per_chunk;
  return std::min(n, max_chunks);
}

HashColumn hash_column(std::string quoted, const std::string& type, bool not_null, bool numerics_by_value) {
  auto kind = shardio::value_kind(type);
  if (!numerics_by_value && (kind == shardio::ValueKind::numeric || kind == shardio::ValueKind::numeric_fixed))
    kind = shardio::ValueKind::numeric_text;
  return {std::move(quoted), kind, not_null};
}

std::string columns_hash_expr(const std::vector<HashColumn>& columns) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    std::string read = std::string(shardio::row_alias) + "." + c.quoted;
    std::string h;
    if (c.kind) {
      h = shardio::value_hash_sql({read, *c.kind, c.not_null}, i);
    } else {
      h = "hashtextextended(" + read + "::text COLLATE \"C\", " + std::to_string(i + 1) + ")";
      if (!c.not_null) h = "coalesce(" + h + ", 0)";
    }
    out += (out.empty() ? "" : " # ") + h;
  }
  return out.empty() ? "0::bigint" : "(" + out + ")";
}

KeySpec key_spec(const std::vector<HashColumn>& columns, const std::vector<std::string>& quoted_key) {
  KeySpec k;
  k.quoted_key = quoted_key;
  k.row_hash = columns_hash_expr(columns);
  std::vector<HashColumn> key;
  for (const auto& q : quoted_key) {
    auto c = std::find_if(columns.begin(), columns.end(), [&](const HashColumn& h) { return h.quoted == q; });
    if (c == columns.end()) throw internal_error("a primary key column " + q + " is not among the table's columns");
    key.push_back(*c);
    key.back().not_null = true;  // a primary key's columns are
  }
  if (!key.empty()) k.key_hash = columns_hash_expr(key);
  return k;
}

namespace {

std::string key_row(const KeySpec& key) {
  std::string row = "ROW(";
  for (std::size_t i = 0; i < key.quoted_key.size(); ++i)
    row += (i ? ", " : "") + std::string(shardio::row_alias) + "." + key.quoted_key[i];
  return row + ")::text";
}

std::string from(const std::string& quoted_table) { return " FROM " + quoted_table + " AS " + shardio::row_alias; }

}  // namespace

std::string key_text_expr(const KeySpec& key) { return key.by_row() ? key.row_hash + "::text" : key_row(key); }

std::string chunk_expr(const KeySpec& key, std::int64_t chunks) {
  // Without a key the row is its own identity: equal rows share a chunk, so a duplicate is
  // counted where its original is.
  const std::string& h = key.by_row() ? key.row_hash : key.key_hash;
  std::string n = std::to_string(chunks);
  return "((" + h + " % " + n + " + " + n + ") % " + n + ")";
}

std::string whole_digest_sql(const std::string& quoted_table, const KeySpec& key) {
  return "SELECT count(*), coalesce(sum(" + key.row_hash + "), 0)::text" + from(quoted_table);
}

std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  return "SELECT " + chunk_expr(key, chunks) + " AS chunk, count(*), sum(" + key.row_hash + ")::text" + from(quoted_table) +
         " GROUP BY 1";
}

std::string row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  std::string chunk = chunk_expr(key, chunks);
  return "SELECT " + chunk + ", " + key_text_expr(key) + ", " + key.row_hash + "::text" + from(quoted_table) + " WHERE " +
         chunk + " = ANY($1::bigint[])";
}

std::string chunk_array(const std::vector<std::int64_t>& chunks) {
  std::string out = "{";
  for (std::size_t i = 0; i < chunks.size(); ++i) out += (i ? "," : "") + std::to_string(chunks[i]);
  return out + "}";
}

std::vector<std::string> parents_first(const std::vector<std::string>& tables,
                                       const std::vector<std::pair<std::string, std::string>>& references) {
  return shardctl::parents_first(tables, references, "reference tables");
}

}  // namespace shardctl::refdata
