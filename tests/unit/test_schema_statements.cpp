#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "schema/statements.hpp"

using namespace shardctl::schema;

namespace {
std::vector<std::string> texts(const std::string& sql) {
  std::vector<std::string> out;
  for (const auto& s : split_statements(sql)) out.push_back(s.sql);
  return out;
}
}  // namespace

TEST_CASE("statements split at top-level semicolons; blanks and comment-only pieces are dropped") {
  CHECK(texts("select 1; select 2;") == std::vector<std::string>{"select 1", "select 2"});
  CHECK(texts("select 1;\n\n-- done\n") == std::vector<std::string>{"select 1"});
  CHECK(texts("select 1") == std::vector<std::string>{"select 1"});
  CHECK(texts(";;  ;").empty());
  CHECK(texts("/* only */ -- comments\n").empty());
}

TEST_CASE("semicolons inside quotes, identifiers, dollar quotes and comments do not split") {
  CHECK(texts("select 'a;b', 'it''s;'; select 2") == std::vector<std::string>{"select 'a;b', 'it''s;'", "select 2"});
  CHECK(texts("select E'x\\';y'; select 2") == std::vector<std::string>{"select E'x\\';y'", "select 2"});
  CHECK(texts("create table \"a;b\" (\"c\"\"d;\" int); select 2").size() == 2);
  std::string fn = "create function f() returns int language plpgsql as $$ begin return 1; end; $$";
  CHECK(texts(fn + "; select 2") == std::vector<std::string>{fn, "select 2"});
  std::string tagged = "do $body$ begin perform 'x$$;'; end $body$";
  CHECK(texts(tagged + ";select 3") == std::vector<std::string>{tagged, "select 3"});
  CHECK(texts("select 1 -- a;b\n; select 2").size() == 2);
  CHECK(texts("select /* a; /* nested; */ b; */ 1; select 2").size() == 2);
  // $1 is a parameter and a$b$ an identifier: neither opens a dollar quote.
  CHECK(texts("prepare p as select $1; select 2").size() == 2);
  CHECK(texts("select a$b$c; select 2").size() == 2);
}

TEST_CASE("each statement knows its byte offset in the file") {
  auto st = split_statements("-- header\ncreate index concurrently i on t (a);\n  select 2;");
  REQUIRE(st.size() == 2);
  CHECK(st[0].offset == 10);
  CHECK(st[0].sql == "create index concurrently i on t (a)");
  CHECK(st[1].offset == 50);
  CHECK(st[1].sql == "select 2");
}
