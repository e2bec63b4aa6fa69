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
