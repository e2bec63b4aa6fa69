#include <doctest/doctest.h>

#include "catalog/names.hpp"
#include "core/error.hpp"

using namespace shardctl;
using namespace shardctl::catalog;

namespace {

// The usage error's message, or "" when `f` does not throw one.
template <class F>
std::string usage_message(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::usage ? std::string(e.what()) : "not a usage error";
  }
  return "";
}

}  // namespace

TEST_CASE("table names are qualified with public by default") {
  CHECK(qualify_table("orders") == "public.orders");
  CHECK(qualify_table("sales.orders") == "sales.orders");
  CHECK(qualify_table("\"Odd.Name\"") == "public.\"Odd.Name\"");
  CHECK_THROWS_AS(qualify_table("a.b.c"), Error);
  CHECK_THROWS_AS(qualify_table("bad name"), Error);
  CHECK_THROWS_AS(qualify_table(""), Error);
  CHECK_THROWS_AS(qualify_table("x;drop table y"), Error);
}

TEST_CASE("bare names fold ASCII to lower case, as PostgreSQL does") {
  CHECK(parse_qualified_name("Public.MixedCase") == QualifiedName{"public", "mixedcase"});
  CHECK(parse_qualified_name("ORDERS") == QualifiedName{"public", "orders"});
  CHECK(parse_qualified_name("a_1$x") == QualifiedName{"public", "a_1$x"});
  CHECK(parse_qualified_name("_t") == QualifiedName{"public", "_t"});
  CHECK(parse_column_name("Tenant_ID") == "tenant_id");
  // Non-ASCII letters are identifier characters and keep their case (UTF-8 databases).
  CHECK(parse_qualified_name("bestellpositionen_ü") == QualifiedName{"public", "bestellpositionen_ü"});
  CHECK(parse_qualified_name("Straße_Ü") == QualifiedName{"public", "straße_Ü"});
  CHECK(parse_column_name("ключ") == "ключ");
  // Whitespace between tokens is SQL's.
  CHECK(parse_qualified_name("  sales . orders ") == QualifiedName{"sales", "orders"});
}

TEST_CASE("double-quoted names are kept exactly; a doubled quote is one quote") {
  CHECK(parse_qualified_name("\"Sales\".\"Order Lines\"") == QualifiedName{"Sales", "Order Lines"});
  CHECK(parse_qualified_name("\"Order Lines\"") == QualifiedName{"public", "Order Lines"});
  CHECK(parse_qualified_name("public.\"we\"\"ird\"") == QualifiedName{"public", "we\"ird"});
  CHECK(parse_qualified_name("\"a.b\".\"c.d\"") == QualifiedName{"a.b", "c.d"});
  CHECK(parse_qualified_name("\"\"\"\"") == QualifiedName{"public", "\""});
  CHECK(parse_qualified_name("Sales.\"X\"") == QualifiedName{"sales", "X"});
  CHECK(parse_qualified_name("\"1st\"") == QualifiedName{"public", "1st"});
  CHECK(parse_column_name("\"Tenant Id\"") == "Tenant Id");
  CHECK(parse_column_name("\"Line#\"") == "Line#");
  CHECK(parse_column_name("\"a,b(c)\"") == "a,b(c)");
}

TEST_CASE("bad names are usage errors naming the text") {
  CHECK(usage_message([] { parse_qualified_name("\"Order Lines"); }).find("'\"Order Lines' has an unbalanced double quote") !=
        std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("a.b.c"); }).find("'a.b.c' has more than two dotted parts") !=
        std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("orders x"); }).find("unexpected text after the name: 'x'") !=
        std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("1abc"); }).find("starting with '1'") != std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("$abc"); }).find("starting with '$'") != std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("\"\""); }).find("empty quoted name") != std::string::npos);
  CHECK(usage_message([] { parse_qualified_name(std::string(64, 'a')); }).find("longer than 63 bytes") !=
        std::string::npos);
  CHECK(usage_message([] { parse_qualified_name("\"" + std::string(64, 'A') + "\""); }).find("longer than 63") !=
        std::string::npos);
  CHECK(usage_message([] { parse_qualified_name(std::string(63, 'a')); }).empty());
  // 32 two-byte letters: 64 bytes, over the limit though only 32 characters.
  std::string wide;
  for (int i = 0; i < 32; ++i) wide += "ü";
  CHECK(usage_message([&] { parse_qualified_name(wide); }).find("longer than 63 bytes") != std::string::npos);
  for (const char* bad : {"", " ", ".", "a.", ".a", "a..b", "\"a\"\"", "a b", "a;b", "a-b", "a.b.", "\"a\"b",
                          "a(b)", "-a"})
    CHECK_MESSAGE(!usage_message([&] { parse_qualified_name(bad); }).empty(), bad);
  for (const char* bad : {"", "a.b", "\"a\".b", "a b", "\"a", "(a)", "1a"})
    CHECK_MESSAGE(!usage_message([&] { parse_column_name(bad); }).empty(), bad);
  CHECK(usage_message([] { parse_column_name("t.col"); }).find("column name 't.col'") != std::string::npos);
}

TEST_CASE("bytes that are not UTF-8 are a usage error, shown escaped") {
  for (std::string bad : {std::string("caf\xE9"), std::string("\"\xC0\xAF\""), std::string("a\xED\xA0\x80"),
                          std::string("\xF4\x90\x80\x80"), std::string("x\xE2\x82")}) {
    auto msg = usage_message([&] { parse_qualified_name(bad); });
    CHECK_MESSAGE(msg.find("is not valid UTF-8") != std::string::npos, msg);
  }
  CHECK(usage_message([] { parse_qualified_name("caf\xE9"); }).find("'caf\\xE9'") != std::string::npos);
  CHECK(usage_message([] { parse_column_name("k\xFF"); }).find("is not valid UTF-8") != std::string::npos);
}

TEST_CASE("display form quotes a part only where PostgreSQL needs it (its quote_ident rule)") {
  CHECK(display_ident("orders") == "orders");
  CHECK(display_ident("order_lines2") == "order_lines2");
  CHECK(display_ident("_x") == "_x");
  CHECK(display_ident("MixedCase") == "\"MixedCase\"");
  CHECK(display_ident("Order Lines") == "\"Order Lines\"");
  CHECK(display_ident("we\"ird") == "\"we\"\"ird\"");
  CHECK(display_ident("a.b") == "\"a.b\"");
  CHECK(display_ident("1st") == "\"1st\"");
  CHECK(display_ident("a$") == "\"a$\"");
  CHECK(display_ident("bestellpositionen_ü") == "\"bestellpositionen_ü\"");
  // Keywords that are not unreserved are quoted; unreserved ones are not.
  CHECK(display_ident("order") == "\"order\"");
  CHECK(display_ident("user") == "\"user\"");
  CHECK(display_ident("select") == "\"select\"");
  CHECK(display_ident("xmltable") == "\"xmltable\"");
  CHECK(display_ident("all") == "\"all\"");
  CHECK(display_ident("name") == "name");
  CHECK(display_ident("key") == "key");
  CHECK(display_name({"Sales", "Order Lines"}) == "\"Sales\".\"Order Lines\"");
  CHECK(display_name({"public", "we\"ird"}) == "public.\"we\"\"ird\"");
}

TEST_CASE("display form parses back to the same raw parts") {
  for (const QualifiedName& n : std::initializer_list<QualifiedName>{
           {"public", "orders"}, {"Sales", "Order Lines"}, {"public", "we\"ird"}, {"a.b", "c.d"},
           {"public", "bestellpositionen_ü"}, {"public", "order"}, {"s", "\""}, {"x", "1st"}}) {
    CHECK(parse_qualified_name(display_name(n)) == n);
    CHECK(split_stored(display_name(n)) == n);
  }
}

TEST_CASE("stored names split into raw parts, also as older catalogs wrote them") {
  CHECK(split_stored("public.orders") == QualifiedName{"public", "orders"});
  CHECK(split_stored("\"Sales\".\"Order Lines\"") == QualifiedName{"Sales", "Order Lines"});
  CHECK(split_stored("public.\"we\"\"ird\"") == QualifiedName{"public", "we\"ird"});
  CHECK(split_stored("public.\"Odd.Name\"") == QualifiedName{"public", "Odd.Name"});
  // Older catalogs kept bare mixed case as typed; it always meant exactly those characters.
  CHECK(split_stored("public.MixedCase") == QualifiedName{"public", "MixedCase"});
  CHECK(split_stored("public.\"orders\"") == QualifiedName{"public", "orders"});
  CHECK(display_stored("public.\"orders\"") == "public.orders");
  CHECK(display_stored("public.MixedCase") == "public.\"MixedCase\"");
  // A lone quote inside a quoted part (accepted before): outer quotes stripped, as then.
  CHECK(split_stored("public.\"a\"b\"") == QualifiedName{"public", "a\"b"});
}

TEST_CASE("qualified names are quoted part by part") {
  CHECK(quote_qualified("public.orders") == "\"public\".\"orders\"");
  CHECK(quote_qualified("public.\"Odd.Name\"") == "\"public\".\"Odd.Name\"");
  CHECK(quote_qualified("s.\"we\"\"ird\"") == "\"s\".\"we\"\"ird\"");
  CHECK(quote_qualified("\"Sales\".\"Order Lines\"") == "\"Sales\".\"Order Lines\"");
  CHECK(quote_qualified("\"a.b\".\"c.d\"") == "\"a.b\".\"c.d\"");
  CHECK(quote_qualified(qualify_table("Public.MixedCase")) == "\"public\".\"mixedcase\"");
  CHECK(quote_qualified(qualify_table("public.\"we\"\"ird\"")) == "\"public\".\"we\"\"ird\"");
}

TEST_CASE("table(columns) references parse") {
  auto tc = parse_table_columns("order_lines(customer_id, order_id)");
  CHECK(tc.table == "public.order_lines");
  REQUIRE(tc.columns.size() == 2);
  CHECK(tc.columns[0] == "customer_id");
  CHECK(tc.columns[1] == "order_id");
  auto q = parse_table_columns("\"Sales\".\"Order Lines\"(\"Tenant Id\", B ,\"a,b\")");
  CHECK(q.table == "\"Sales\".\"Order Lines\"");
  CHECK(q.columns == std::vector<std::string>{"Tenant Id", "b", "a,b"});
  CHECK(parse_table_columns("\"Order Lines\"(\"Tenant Id\")").table == "public.\"Order Lines\"");
  CHECK(parse_table_columns("t (\"x)\")").columns == std::vector<std::string>{"x)"});
  CHECK_THROWS_AS(parse_table_columns("orders"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders()"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(a,)"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(a) x"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(a"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(\"a)"), Error);
  CHECK_THROWS_AS(parse_table_columns("orders(t.a)"), Error);
  CHECK_THROWS_AS(parse_table_columns("a.b.c(x)"), Error);
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
