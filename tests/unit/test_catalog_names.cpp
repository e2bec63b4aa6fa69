#include <doctest/doctest.h>

#include "catalog/names.hpp"
#include "core/error.hpp"

using namespace shardctl;
using namespace shardctl::catalog;

TEST_CASE("table names are qualified with public by default") {
  CHECK(qualify_table("orders") == "public.orders");
  CHECK(qualify_table("sales.orders") == "sales.orders");
  CHECK(qualify_table("\"Odd.Name\"") == "public.\"Odd.Name\"");
  CHECK_THROWS_AS(qualify_table("a.b.c"), Error);
  CHECK_THROWS_AS(qualify_table("bad name"), Error);
  CHECK_THROWS_AS(qualify_table(""), Error);
  CHECK_THROWS_AS(qualify_table("x;drop table y"), Error);
}

TEST_CASE("qualified names are quoted part by part") {
  CHECK(quote_qualified("public.orders") == "\"public\".\"orders\"");
  CHECK(quote_qualified("public.\"Odd.Name\"") == "\"public\".\"Odd.Name\"");
  CHECK(quote_qualified("s.\"we\"\"ird\"") == "\"s\".\"we\"\"\"\"ird\"");
}

TEST_CASE("table(columns) references parse") {
  auto tc = parse_table_columns("order_lines(customer_id, order_id)");
  CHECK(tc.table == "public.order_lines");
  REQUIRE(tc.columns.size() == 2);
  CHECK(tc.columns[0] == "customer_id");
  CHECK(tc.columns[1] == "order_id");
  CHECK_THROWS_AS(parse_table_columns("orders"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders()"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(a,)"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(a) x"), Error);
}

TEST_CASE("shard and map names") {
  CHECK_NOTHROW(require_name("shard", "shard_1"));
  CHECK_NOTHROW(require_name("shard", "eu-west.1"));
  CHECK_THROWS_AS(require_name("shard", "1shard"), Error);
  CHECK_THROWS_AS(require_name("shard", ""), Error);
  CHECK_THROWS_AS(require_name("shard", "a b"), Error);
  CHECK_THROWS_AS(require_name("shard", std::string(64, 'a')), Error);
}

TEST_CASE("text[] literals quote every element and escape quotes and backslashes") {
  CHECK(catalog::text_array_literal({}) == "{}");
  CHECK(catalog::text_array_literal({"customer_id", "order_id"}) == "{\"customer_id\",\"order_id\"}");
  CHECK(catalog::text_array_literal({"a,b", "NULL", "x\"y\\z"}) == "{\"a,b\",\"NULL\",\"x\\\"y\\\\z\"}");
}
