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
  if (key.size() == 1) k.range_type = range_type(key.front().kind);
  return k;
}

std::string range_type(std::optional<shardio::ValueKind> kind) {
  if (!kind) return "";
  switch (*kind) {
    case shardio::ValueKind::int2: return "smallint";
    case shardio::ValueKind::int4: return "integer";
    case shardio::ValueKind::int8: return "bigint";
    case shardio::ValueKind::date: return "date";
    case shardio::ValueKind::timestamp: return "timestamp";
    case shardio::ValueKind::timestamptz: return "timestamptz";
    case shardio::ValueKind::uuid: return "uuid";
    // Hashed by value or by text, a numeric is ordered by its value on every server.
    case shardio::ValueKind::numeric:
    case shardio::ValueKind::numeric_fixed:
    case shardio::ValueKind::numeric_text: return "numeric";
    case shardio::ValueKind::boolean:
    case shardio::ValueKind::text: return "";
  }
  return "";
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

std::string bounds_array(const KeySpec& key, const std::string& text) { return text + "::" + key.range_type + "[]"; }

namespace {

std::string range_key(const KeySpec& key) { return std::string(shardio::row_alias) + "." + key.quoted_key.front(); }

// Bound i (1-based) of `bounds`, an SQL array.
std::string bound(const std::string& bounds, std::int64_t i) { return "(" + bounds + ")[" + std::to_string(i) + "]"; }

}  // namespace

std::string range_chunk_expr(const KeySpec& key, const std::string& bounds) {
  return "width_bucket(" + range_key(key) + ", " + bounds + ")";
}

std::string range_where(const KeySpec& key, const std::string& bounds, std::int64_t chunks,
                        const std::vector<std::int64_t>& which) {
  // Chunk i holds bound i <= key < bound i + 1 (1-based bounds; chunk 0 has no lower bound,
  // chunk chunks - 1 no upper one). A run of neighbouring chunks is one range.
  std::string k = range_key(key), out;
  int arms = 0;
  for (std::size_t i = 0; i < which.size();) {
    std::size_t j = i;
    while (j + 1 < which.size() && which[j + 1] == which[j] + 1) ++j;
    std::int64_t first = which[i], last = which[j];
    std::string lower = first > 0 ? k + " >= " + bound(bounds, first) : "";
    std::string upper = last < chunks - 1 ? k + " < " + bound(bounds, last + 1) : "";
    if (lower.empty() && upper.empty()) return "true";
    if (!out.empty()) out += " OR ";
    out += lower;
    if (!lower.empty() && !upper.empty()) out += " AND ";
    out += upper;
    ++arms;
    i = j + 1;
  }
  if (out.empty()) return "false";
  return arms > 1 ? "(" + out + ")" : out;
}

std::string chunks_where(const KeySpec& key, const Chunking& chunking, const std::vector<std::int64_t>& which,
                         const std::string& bounds_text) {
  if (chunking.by_range()) return range_where(key, bounds_array(key, bounds_text), chunking.count, which);
  return chunk_expr(key, chunking.count) + " = ANY('" + chunk_array(which) + "'::bigint[])";
}

std::optional<double> sample_percent(std::int64_t estimated_rows, std::int64_t chunks) {
  if (estimated_rows < sample_whole_below) return std::nullopt;
  double percent = 100.0 * static_cast<double>(chunks * sample_rows_per_chunk) / static_cast<double>(estimated_rows);
  if (percent >= 25) return std::nullopt;
  return percent;
}

std::string sample_bounds_sql(const std::string& quoted_table, const KeySpec& key, bool sampled) {
  // percentile_disc gives one key per fraction, in order; DISTINCT drops the repeats a sample
  // with fewer rows than chunks gives (a primary key's values are distinct otherwise).
  return "SELECT coalesce(a::text, '{}'), coalesce(cardinality(a), 0) FROM (SELECT array_agg(DISTINCT b ORDER BY b) AS a "
         "FROM unnest((SELECT percentile_disc(ARRAY(SELECT g::float8 / $1::int FROM generate_series(1, $1::int - 1) AS g)) "
         "WITHIN GROUP (ORDER BY " +
         range_key(key) + ")" + from(quoted_table) + (sampled ? " TABLESAMPLE SYSTEM ($2::float4)" : "") +
         ")) AS b) AS s";
}

std::string whole_digest_sql(const std::string& quoted_table, const KeySpec& key) {
  return "SELECT count(*), coalesce(sum(" + key.row_hash + "), 0)::text" + from(quoted_table);
}

std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  return "SELECT " + chunk_expr(key, chunks) + " AS chunk, count(*), sum(" + key.row_hash + ")::text" + from(quoted_table) +
         " GROUP BY 1";
}

std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, const Chunking& chunking) {
  if (!chunking.by_range()) return chunk_digest_sql(quoted_table, key, chunking.count);
  return "SELECT " + range_chunk_expr(key, bounds_array(key, "$1")) + " AS chunk, count(*), sum(" + key.row_hash + ")::text" +
         from(quoted_table) + " GROUP BY 1";
}

std::string range_row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks,
                                 const std::vector<std::int64_t>& which) {
  std::string bounds = bounds_array(key, "$1");
  return "SELECT " + range_chunk_expr(key, bounds) + ", " + key_text_expr(key) + ", " + key.row_hash + "::text" +
         from(quoted_table) + " WHERE " + range_where(key, bounds, chunks, which);
}

std::string row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks) {
  std::string chunk = chunk_expr(key, chunks);
  return "SELECT " + chunk + ", " + key_text_expr(key) + ", " + key.row_hash + "::text" + from(quoted_table) + " WHERE " +
         chunk + " = ANY($1::bigint[])";
}

std::string chunk_array(const std::vector<std::int64_t>& chunks) {
  std::string out = "{";
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(chunks[i]);
  }
  return out + "}";
}

std::vector<std::string> parents_first(const std::vector<std::string>& tables,
                                       const std::vector<std::pair<std::string, std::string>>& references) {
  return shardctl::parents_first(tables, references, "reference tables");
}

}  // namespace shardctl::refdata
