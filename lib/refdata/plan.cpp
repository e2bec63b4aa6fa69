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

namespace {

std::string key_row(const KeySpec& key) {
  std::string row = "ROW(";
  for (std::size_t i = 0; i < key.quoted_key.size(); ++i)
    row += (i ? ", " : "") + std::string(shardio::row_alias) + "." + key.quoted_key[i];
  return row + ")::text";
}

}  // namespace

std::string row_hash_expr() { return std::string("hashtextextended(") + shardio::row_alias + "::text, 0)"; }

std::string key_text_expr(const KeySpec& key) { return key.by_row() ? row_hash_expr() + "::text" : key_row(key); }

std::string chunk_expr(const KeySpec& key, std::int64_t chunks) {
  // Without a key the row is its own identity: equal rows share a chunk, so a duplicate is
  // counted where its original is.
  std::string h = key.by_row() ? row_hash_expr() : "hashtextextended(" + key_row(key) + ", 0)";
  std::string n = std::to_string(chunks);
  return "((" + h + " % " + n + " + " + n + ") % " + n + ")";
}

std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  return "SELECT " + chunk_expr(key, chunks) + " AS chunk, count(*), " + shardio::row_hash_sum_fast() + "::text FROM " +
         quoted_table + " AS " + shardio::row_alias + " GROUP BY 1 ORDER BY 1";
}

std::string row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  std::string chunk = chunk_expr(key, chunks);
  return "SELECT " + chunk + ", " + key_text_expr(key) + ", " + row_hash_expr() + "::text FROM " + quoted_table + " AS " +
         shardio::row_alias + " WHERE " + chunk + " = ANY($1::bigint[])";
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
