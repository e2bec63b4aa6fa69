// Reference-table comparison plans (lib/refdata/plan.hpp): how many chunks, the chunk SQL every
// shard runs the same, and the foreign-key order sync-reference changes tables in.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "refdata/plan.hpp"

using namespace shardctl;
using namespace shardctl::refdata;

TEST_CASE("chunk_count: one chunk for a small table, about rows_per_chunk rows each above, capped") {
  CHECK(chunk_count(-1) == 1);
  CHECK(chunk_count(0) == 1);
  CHECK(chunk_count(rows_per_chunk) == 1);
  CHECK(chunk_count(rows_per_chunk + 1) == 2);
  CHECK(chunk_count(500'000) == 500);
  CHECK(chunk_count(10'000'000) == max_chunks);
  CHECK(max_chunks == 1024);
  CHECK(chunk_count(std::int64_t{1} << 40) == max_chunks);
}

namespace {

// product(id bigint primary key, name text not null, price numeric(12,2), logo bytea).
std::vector<HashColumn> product_columns(bool numerics_by_value = true) {
  return {hash_column("\"id\"", "bigint", true, numerics_by_value), hash_column("\"name\"", "text", true, numerics_by_value),
          hash_column("\"price\"", "numeric(12,2)", false, numerics_by_value),
          hash_column("\"logo\"", "bytea", false, numerics_by_value)};
}

}  // namespace

TEST_CASE("hash_column: a value kind where the value digest has one; numerics by text when the servers' probes differ") {
  auto cols = product_columns();
  CHECK(cols[0].kind == shardio::ValueKind::int8);
  CHECK(cols[1].kind == shardio::ValueKind::text);
  CHECK(cols[2].kind == shardio::ValueKind::numeric_fixed);
  CHECK_FALSE(cols[3].kind.has_value());
  CHECK(product_columns(false)[2].kind == shardio::ValueKind::numeric_text);
  CHECK(hash_column("\"n\"", "numeric", true, false).kind == shardio::ValueKind::numeric_text);
  CHECK(hash_column("\"n\"", "numeric", true, true).kind == shardio::ValueKind::numeric);
}

TEST_CASE("the row hash: a seeded hash per column XORed, values where they have a kind, text for the others, never the row's text") {
  auto h = columns_hash_expr(product_columns());
  CHECK(h ==
        "(hashint8extended(shardctl_row.\"id\", 1) # hashtextextended(shardctl_row.\"name\" COLLATE \"C\", 2) # "
        "coalesce(hash_numeric_extended(shardctl_row.\"price\", CASE WHEN shardctl_row.\"price\" < 0 THEN 4294967299 ELSE 3 "
        "END), 0) # coalesce(hashtextextended(shardctl_row.\"logo\"::text COLLATE \"C\", 4), 0))");
  CHECK(h.find("shardctl_row::text") == std::string::npos);
  CHECK(columns_hash_expr({}) == "0::bigint");
}

TEST_CASE("key_spec: chunks cut by the key's own hash (its columns NOT NULL), rows hashed whole") {
  auto k = key_spec(product_columns(), {"\"id\""});
  CHECK_FALSE(k.by_row());
  CHECK(k.row_hash == columns_hash_expr(product_columns()));
  CHECK(k.key_hash == "(hashint8extended(shardctl_row.\"id\", 1))");
  CHECK(chunk_expr(k, 7) == "(((hashint8extended(shardctl_row.\"id\", 1)) % 7 + 7) % 7)");
  CHECK(key_text_expr(k) == "ROW(shardctl_row.\"id\")::text");
  auto composite = key_spec(product_columns(), {"\"logo\"", "\"price\""});
  CHECK(composite.key_hash ==
        "(hashtextextended(shardctl_row.\"logo\"::text COLLATE \"C\", 1) # hash_numeric_extended(shardctl_row.\"price\", "
        "CASE WHEN shardctl_row.\"price\" < 0 THEN 4294967298 ELSE 2 END))");
  CHECK(key_text_expr(composite) == "ROW(shardctl_row.\"logo\", shardctl_row.\"price\")::text");
  CHECK_THROWS_AS(key_spec(product_columns(), {"\"nope\""}), Error);
}

TEST_CASE("without a primary key the row is its own identity: chunk and key both come from the row hash") {
  auto none = key_spec(product_columns(), {});
  CHECK(none.by_row());
  CHECK(none.key_hash.empty());
  CHECK(chunk_expr(none, 3) == "((" + none.row_hash + " % 3 + 3) % 3)");
  CHECK(key_text_expr(none) == none.row_hash + "::text");
}

TEST_CASE("the digests: the whole table's with no GROUP BY, then per chunk in no order; exact sums (sum(bigint) is numeric), never XOR") {
  auto key = key_spec(product_columns(), {"\"id\""});
  auto whole = whole_digest_sql("\"public\".\"product\"", key);
  CHECK(whole == "SELECT count(*), coalesce(sum(" + key.row_hash + "), 0)::text FROM \"public\".\"product\" AS shardctl_row");
  auto sql = chunk_digest_sql("\"public\".\"product\"", key, 4);
  CHECK(sql == "SELECT " + chunk_expr(key, 4) + " AS chunk, count(*), sum(" + key.row_hash +
                   ")::text FROM \"public\".\"product\" AS shardctl_row GROUP BY 1");
  CHECK(sql.find("bit_xor") == std::string::npos);
  CHECK(sql.find("ORDER BY") == std::string::npos);
  auto rows = row_hashes_sql("t", key, 4);
  CHECK(rows == "SELECT " + chunk_expr(key, 4) + ", ROW(shardctl_row.\"id\")::text, " + key.row_hash +
                    "::text FROM t AS shardctl_row WHERE " + chunk_expr(key, 4) + " = ANY($1::bigint[])");
}

TEST_CASE("range chunks only where the key is one column of a type without a collation") {
  CHECK(key_spec(product_columns(), {"\"id\""}).range_type == "bigint");
  CHECK(key_spec(product_columns(), {"\"id\""}).rangeable());
  CHECK_FALSE(key_spec(product_columns(), {"\"name\""}).rangeable());  // text: a range under one collation only
  CHECK_FALSE(key_spec(product_columns(), {"\"id\"", "\"name\""}).rangeable());
  CHECK_FALSE(key_spec(product_columns(), {"\"logo\""}).rangeable());  // bytea: hashed by its text
  CHECK_FALSE(key_spec(product_columns(), {}).rangeable());
  CHECK(key_spec(product_columns(false), {"\"price\""}).range_type == "numeric");  // by its value whatever its hash
  auto type_of = [](const char* type) { return key_spec({hash_column("\"k\"", type, true, true)}, {"\"k\""}).range_type; };
  CHECK(type_of("smallint") == "smallint");
  CHECK(type_of("integer") == "integer");
  CHECK(type_of("uuid") == "uuid");
  CHECK(type_of("date") == "date");
  CHECK(type_of("timestamp(3) without time zone") == "timestamp");
  CHECK(type_of("timestamp with time zone") == "timestamptz");
  CHECK(type_of("numeric") == "numeric");
  CHECK(type_of("character varying(20)").empty());
  CHECK(type_of("boolean").empty());
  CHECK(type_of("real").empty());
  CHECK(type_of("ref_mood").empty());
}

TEST_CASE("range chunks: width_bucket of the key in the bound bounds, digested like hash chunks") {
  auto key = key_spec(product_columns(), {"\"id\""});
  CHECK(bounds_array(key, "$1") == "$1::bigint[]");
  CHECK(range_chunk_expr(key, "$1::bigint[]") == "width_bucket(shardctl_row.\"id\", $1::bigint[])");
  Chunking ranges{4, "{10,20,30}"};
  CHECK(ranges.by_range());
  CHECK(chunk_digest_sql("t", key, ranges) == "SELECT width_bucket(shardctl_row.\"id\", $1::bigint[]) AS chunk, count(*), sum(" +
                                                  key.row_hash + ")::text FROM t AS shardctl_row GROUP BY 1");
  Chunking hashed{4, ""};
  CHECK_FALSE(hashed.by_range());
  CHECK(chunk_digest_sql("t", key, hashed) == chunk_digest_sql("t", key, 4));
}

TEST_CASE("range_where: one key range per run of neighbouring chunks, no lower bound for chunk 0, no upper one for the last") {
  auto key = key_spec(product_columns(), {"\"id\""});
  std::string k = "shardctl_row.\"id\"";
  auto b = [](int i) { return "(B)[" + std::to_string(i) + "]"; };
  // 6 chunks: 0 below b[1], i in [b[i], b[i+1]), 5 at or above b[5].
  CHECK(range_where(key, "B", 6, {0}) == k + " < " + b(1));
  CHECK(range_where(key, "B", 6, {5}) == k + " >= " + b(5));
  CHECK(range_where(key, "B", 6, {2}) == k + " >= " + b(2) + " AND " + k + " < " + b(3));
  CHECK(range_where(key, "B", 6, {0, 3, 4}) == "(" + k + " < " + b(1) + " OR " + k + " >= " + b(3) + " AND " + k + " < " + b(5) + ")");
  CHECK(range_where(key, "B", 6, {1, 2, 5}) == "(" + k + " >= " + b(1) + " AND " + k + " < " + b(3) + " OR " + k + " >= " + b(5) + ")");
  CHECK(range_where(key, "B", 6, {0, 1, 2, 3, 4, 5}) == "true");
  CHECK(range_where(key, "B", 6, {0, 1}) == k + " < " + b(2));
  CHECK(range_where(key, "B", 6, {}) == "false");
  CHECK(range_where(key, "B", 1, {0}) == "true");
}

TEST_CASE("the rows of range chunks: read by key ranges with the bounds bound, never the whole table's chunk numbers") {
  auto key = key_spec(product_columns(), {"\"id\""});
  auto sql = range_row_hashes_sql("t", key, 6, {0, 4});
  CHECK(sql == "SELECT width_bucket(shardctl_row.\"id\", $1::bigint[]), ROW(shardctl_row.\"id\")::text, " + key.row_hash +
                   "::text FROM t AS shardctl_row WHERE (shardctl_row.\"id\" < ($1::bigint[])[1] OR shardctl_row.\"id\" >= "
                   "($1::bigint[])[4] AND shardctl_row.\"id\" < ($1::bigint[])[5])");
  // Sync reads them in statements without parameters: the bounds through a setting, the chunk
  // numbers written; hash chunks as before.
  Chunking ranges{6, "{1,2,3,4,5}"};
  CHECK(chunks_where(key, ranges, {5}, "current_setting('x')") == "shardctl_row.\"id\" >= (current_setting('x')::bigint[])[5]");
  CHECK(chunks_where(key, {6, ""}, {1, 5}, "") == chunk_expr(key, 6) + " = ANY('{1,5}'::bigint[])");
}

TEST_CASE("sampling the bounds: every row of a small table, else TABLESAMPLE of about sample_rows_per_chunk rows a chunk") {
  CHECK_FALSE(sample_percent(0, 2).has_value());
  CHECK_FALSE(sample_percent(sample_whole_below - 1, 99).has_value());
  CHECK(sample_percent(10'000'000, 1024) == doctest::Approx(100.0 * 1024 * sample_rows_per_chunk / 10'000'000));
  CHECK(*sample_percent(200'000, 200) == doctest::Approx(10.0));
  CHECK_FALSE(sample_percent(200'000, 600).has_value());  // a quarter of it or more: read it whole
  auto key = key_spec(product_columns(), {"\"id\""});
  std::string whole = sample_bounds_sql("\"public\".\"product\"", key, false);
  CHECK(whole ==
        "SELECT coalesce(a::text, '{}'), coalesce(cardinality(a), 0) FROM (SELECT array_agg(DISTINCT b ORDER BY b) AS a FROM "
        "unnest((SELECT percentile_disc(ARRAY(SELECT g::float8 / $1::int FROM generate_series(1, $1::int - 1) AS g)) WITHIN "
        "GROUP (ORDER BY shardctl_row.\"id\") FROM \"public\".\"product\" AS shardctl_row)) AS b) AS s");
  std::string sampled = sample_bounds_sql("t", key, true);
  CHECK(sampled.find(" FROM t AS shardctl_row TABLESAMPLE SYSTEM ($2::float4))") != std::string::npos);
}

TEST_CASE("chunk_array is a bigint[] literal") {
  CHECK(chunk_array({}) == "{}");
  CHECK(chunk_array({3}) == "{3}");
  CHECK(chunk_array({1, 5, 9}) == "{1,5,9}");
}

TEST_CASE("parents_first: a chain of three in any input order, parents first") {
  std::vector<std::pair<std::string, std::string>> refs{{"city", "country"}, {"country", "region"}};
  CHECK(parents_first({"city", "country", "region"}, refs) == std::vector<std::string>{"region", "country", "city"});
  CHECK(parents_first({"region", "city", "country"}, refs) == std::vector<std::string>{"region", "country", "city"});
}

TEST_CASE("parents_first: unrelated tables keep their order; self references and outside tables are ignored") {
  std::vector<std::pair<std::string, std::string>> refs{{"a", "a"}, {"b", "sharded"}, {"c", "a"}};
  CHECK(parents_first({"c", "b", "a"}, refs) == std::vector<std::string>{"a", "c", "b"});
}

TEST_CASE("parents_first: a cycle is refused, naming a table on it") {
  std::vector<std::pair<std::string, std::string>> refs{{"a", "b"}, {"b", "a"}};
  CHECK_THROWS_WITH_AS(parents_first({"a", "b"}, refs), doctest::Contains("form a cycle at"), Error);
}
