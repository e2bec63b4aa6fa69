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
  CHECK(chunk_count(10'000'000) == 10'000);
  CHECK(chunk_count(std::int64_t{1} << 40) == max_chunks);
}

TEST_CASE("chunk_expr: a non-negative remainder of the key's hash, the key read through the row alias") {
  KeySpec key{{"\"a\"", "\"B c\""}};
  CHECK(chunk_expr(key, 7) ==
        "((hashtextextended(ROW(shardctl_row.\"a\", shardctl_row.\"B c\")::text, 0) % 7 + 7) % 7)");
  CHECK(key_text_expr(key) == "ROW(shardctl_row.\"a\", shardctl_row.\"B c\")::text");
}

TEST_CASE("without a primary key the row is its own identity: chunk and key both come from the row hash") {
  KeySpec none;
  CHECK(none.by_row());
  CHECK(chunk_expr(none, 3) == "((hashtextextended(shardctl_row::text, 0) % 3 + 3) % 3)");
  CHECK(key_text_expr(none) == "hashtextextended(shardctl_row::text, 0)::text");
}

TEST_CASE("the digest query groups per chunk and sums row hashes exactly (sum(bigint) is numeric), never XOR") {
  auto sql = chunk_digest_sql("\"public\".\"product\"", KeySpec{{"\"id\""}}, 4);
  CHECK(sql.find("GROUP BY 1") != std::string::npos);
  CHECK(sql.find("sum(hashtextextended(shardctl_row::text, 0))") != std::string::npos);
  CHECK(sql.find("FROM \"public\".\"product\" AS shardctl_row") != std::string::npos);
  CHECK(sql.find("bit_xor") == std::string::npos);
  auto rows = row_hashes_sql("t", KeySpec{{"\"id\""}}, 4);
  CHECK(rows.find("= ANY($1::bigint[])") != std::string::npos);
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
