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

namespace {
std::vector<std::string> controls(const std::string& sql) {
  std::vector<std::string> out;
  for (const auto& s : split_statements(sql))
    if (auto tc = transaction_control(s)) out.push_back(*tc);
  return out;
}
}  // namespace

TEST_CASE("parentheses and SQL-standard routine bodies hold their semicolons, as psql reads them") {
  std::string body =
      "create function f(x int) returns int language sql begin atomic select case when x > 0 then 1 else 0 end; "
      "select 2; end";
  CHECK(texts(body + "; select 3") == std::vector<std::string>{body, "select 3"});
  std::string proc = "CREATE OR REPLACE PROCEDURE p() BEGIN ATOMIC insert into t values (1); END";
  CHECK(texts(proc + ";\nselect 3;") == std::vector<std::string>{proc, "select 3"});
  std::string rule = "create rule r as on insert to t do also (insert into a values (1); insert into b values (2))";
  CHECK(texts(rule + "; select 3") == std::vector<std::string>{rule, "select 3"});
  // BEGIN outside a routine is a statement of its own.
  CHECK(texts("begin; select 1; commit;") == std::vector<std::string>{"begin", "select 1", "commit"});
}

TEST_CASE("transaction control is found by statement, never inside comments, strings, dollar quotes or identifiers") {
  CHECK(controls("create table t (a int);\nCOMMIT;\ninsert into t values (1);") == std::vector<std::string>{"COMMIT"});
  CHECK(controls("begin; select 1; end;") == std::vector<std::string>{"BEGIN", "END"});
  CHECK(controls("start transaction; savepoint a; release a; rollback to a; abort") ==
        std::vector<std::string>{"START TRANSACTION", "SAVEPOINT", "RELEASE", "ROLLBACK TO", "ABORT"});
  CHECK(controls("prepare transaction 'x'; commit prepared 'x'; rollback prepared 'y'") ==
        std::vector<std::string>{"PREPARE TRANSACTION", "COMMIT PREPARED", "ROLLBACK PREPARED"});
  CHECK(controls("/* commit; */ select 1; -- commit;\nselect 'commit; begin'; select $$ commit; $$; select \"commit\";")
            .empty());
  CHECK(controls("do $body$ begin commit; end $body$; create function f() returns int language sql begin atomic "
                 "select 1; end; prepare q as select 1").empty());
  CHECK(controls("select E'\\';commit;--'").empty());
  // A standard string ends at its first single quote: what follows is SQL.
  CHECK(controls("select '\\';commit;--'") == std::vector<std::string>{"COMMIT"});
}

TEST_CASE("the index a CREATE INDEX statement creates, with its table as to_regclass reads it") {
  auto ix = [](const std::string& sql) { return created_index(split_statements(sql).at(0)); };
  auto a = ix("create unique index concurrently if not exists acct_email_key on acct (email)");
  REQUIRE(a);
  CHECK(a->name == "acct_email_key");
  CHECK(a->table == "\"acct\"");
  auto b = ix("-- x\nCREATE INDEX \"Mixed\"\"Name\" ON ONLY Public.\"Users\" USING btree (a)");
  REQUIRE(b);
  CHECK(b->name == "Mixed\"Name");
  CHECK(b->table == "\"public\".\"Users\"");
  auto c = ix("create index i on db.s.t (a)");
  REQUIRE(c);
  CHECK(c->table == "\"s\".\"t\"");
  CHECK_FALSE(ix("create index on t (a)"));
  CHECK_FALSE(ix("create table t (a int)"));
  CHECK_FALSE(ix("create index concurrently if exists i on t (a)"));
}
