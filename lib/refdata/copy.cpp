#include "refdata/copy.hpp"

#include <algorithm>
#include <charconv>

namespace shardctl::refdata {

bool Shape::operator==(const Shape& o) const {
  if (exists != o.exists || key != o.key || columns.size() != o.columns.size()) return false;
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name != o.columns[i].name || columns[i].type != o.columns[i].type) return false;
  return true;
}

std::string Shape::column_list() const {
  if (!exists) return "no such table";
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + c.name + " " + c.type;
  out += key.empty() ? "; no primary key" : "; primary key (";
  for (std::size_t i = 0; i < key.size(); ++i) out += (i ? ", " : "") + key[i];
  if (!key.empty()) out += ")";
  return out;
}

Shape read_shape(shardio::RawConn& conn, const std::string& quoted_table) {
  Shape s;
  s.exists = conn.query("SELECT to_regclass($1) IS NOT NULL", {quoted_table})[0][0] == "t";
  if (!s.exists) return s;
  s.columns = shardio::table_columns(conn, quoted_table);
  s.key = shardio::primary_key(conn, quoted_table);
  return s;
}

Shape not_null_in_both(Shape shape, const Shape& other) {
  for (std::size_t i = 0; i < shape.columns.size(); ++i)
    shape.columns[i].not_null = shape.columns[i].not_null && i < other.columns.size() && other.columns[i].not_null;
  return shape;
}

bool has_numeric(const Shape& shape) {
  return std::any_of(shape.columns.begin(), shape.columns.end(), [](const shardio::Column& c) {
    auto k = shardio::value_kind(c.type);
    return k == shardio::ValueKind::numeric || k == shardio::ValueKind::numeric_fixed;
  });
}

std::string numeric_probe(shardio::RawConn& conn) { return conn.query(shardio::numeric_probe_sql)[0][0]; }

KeySpec key_spec(shardio::RawConn& conn, const Shape& shape, bool numerics_by_value) {
  std::vector<HashColumn> columns;
  for (const auto& c : shape.columns)
    columns.push_back(hash_column(conn.identifier(c.name), c.type, c.not_null, numerics_by_value));
  std::vector<std::string> key;
  for (const auto& c : shape.key) key.push_back(conn.identifier(c));
  return key_spec(columns, key);
}

std::int64_t estimate_rows(shardio::RawConn& conn, const std::string& quoted_table) {
  auto r = conn.query("SELECT reltuples::bigint, pg_relation_size(oid) FROM pg_class WHERE oid = $1::regclass", {quoted_table});
  std::int64_t tuples = std::stoll(r[0][0]);
  return tuples >= 0 ? tuples : std::stoll(r[0][1]) / 32;
}

ChunkDigest whole_digest(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key) {
  auto r = conn.query(whole_digest_sql(quoted_table, key));
  return {std::stoll(r[0][0]), r[0][1]};
}

Chunking plan_chunks(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key, std::int64_t chunks,
                     std::int64_t estimated_rows) {
  Chunking hashed{chunks, ""};
  if (!key.rangeable() || chunks < 2) return hashed;
  std::vector<std::string> params{std::to_string(chunks)};
  auto percent = sample_percent(estimated_rows, chunks);
  if (percent) {
    char text[32];
    // to_chars: the C locale's decimal point whatever the process's locale.
    params.emplace_back(text, std::to_chars(text, text + sizeof text, *percent).ptr);
  }
  auto r = conn.query(sample_bounds_sql(quoted_table, key, percent.has_value()), params);
  // A sample can miss every row of a table whose estimate is far too high: read it whole then.
  if (percent && r[0][1] == "0") r = conn.query(sample_bounds_sql(quoted_table, key, false), {params[0]});
  std::int64_t bounds = std::stoll(r[0][1]);
  if (bounds == 0) return hashed;
  return {bounds + 1, r[0][0]};
}

ChunkDigests chunk_digests(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key,
                           const Chunking& chunking) {
  ChunkDigests out;
  // The planner takes every row for a chunk of its own (it knows no better of an expression
  // over the key): it sorts them all, where hashing them into the chunks is 2-3x cheaper, and
  // it will not split the scan between parallel workers, as it would have each send every row
  // to the leader. Hence no sort, and such rows priced free (there are `chunks` per worker).
  // SET LOCAL: scoped to this statement's implicit transaction, or to the caller's open one.
  // query_each takes no parameters: range chunks' bounds are bound to the digest on its own,
  // after the settings, in one transaction (a rolled-back one of its own when none is open).
  std::string settings = "SET LOCAL enable_sort = off; SET LOCAL parallel_tuple_cost = 0; ";
  std::vector<std::vector<std::string>> rows;
  if (!chunking.by_range()) {
    rows = conn.query_each(settings + chunk_digest_sql(quoted_table, key, chunking)).at(0);
  } else {
    auto digest = [&] {
      conn.script(settings);
      rows = conn.query(chunk_digest_sql(quoted_table, key, chunking), {chunking.bounds});
    };
    if (PQtransactionStatus(conn.get()) == PQTRANS_IDLE) shardio::in_rolled_back_transaction(conn, digest);
    else digest();
  }
  for (auto& row : rows) out[std::stoll(row[0])] = ChunkDigest{std::stoll(row[1]), row[2]};
  return out;
}

std::vector<ChunkRow> chunk_rows(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key,
                                 const Chunking& chunking, const std::vector<std::int64_t>& which) {
  std::vector<ChunkRow> out;
  if (which.empty()) return out;
  auto rows = chunking.by_range()
                  ? conn.query(range_row_hashes_sql(quoted_table, key, chunking.count, which), {chunking.bounds})
                  : conn.query(row_hashes_sql(quoted_table, key, chunking.count), {chunk_array(which)});
  for (auto& row : rows) out.push_back({std::stoll(row[0]), {row[1], row[2]}});
  return out;
}

}  // namespace shardctl::refdata
