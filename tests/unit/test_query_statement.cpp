// What `shardctl query` refuses from the text alone, before any shard is asked: statements
// that no select, SHOW or EXPLAIN can begin with (read past comments as the server reads
// them), EXPLAIN of anything else, text that cannot be sent (NUL, not UTF-8, empty); and the
// role check's verdicts.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "query/read_role.hpp"
#include "query/statement.hpp"
#include "support.hpp"

using namespace shardctl;
using namespace shardctl::query;

namespace {

std::string refusal(const std::string& sql) {
  return test::usage_error_of([&] { read_shape(statement_text(sql)); });
}

}  // namespace

TEST_CASE("selects, SHOW and EXPLAIN are read past whitespace and comments") {
  CHECK(read_shape("select 1").kind == StatementKind::select);
  CHECK(read_shape("  \n\tSeLeCt 1").first_word == "SELECT");
  CHECK(read_shape("with x as (select 1) select * from x").first_word == "WITH");
  CHECK(read_shape("values (1)").first_word == "VALUES");
  CHECK(read_shape("table orders").first_word == "TABLE");
  CHECK(read_shape("(select 1) union (select 2)").first_word == "(");
  CHECK(read_shape("-- why\n/* outer /* nested */ still comment */ select 1").first_word == "SELECT");
  CHECK(read_shape("--a\r--b\rselect 1").first_word == "SELECT");
  CHECK(read_shape("show work_mem").kind == StatementKind::show);
  CHECK(read_shape("SHOW ALL").kind == StatementKind::show);

  auto e = read_shape("explain select 1");
  CHECK(e.kind == StatementKind::explain);
  CHECK(std::string("explain select 1").substr(e.explained) == "select 1");
  std::string s = "EXPLAIN ANALYZE VERBOSE /* c */ with x as (select 1) table x";
  CHECK(s.substr(read_shape(s).explained) == "with x as (select 1) table x");
  s = "explain analyse values (1)";
  CHECK(s.substr(read_shape(s).explained) == "values (1)");
  s = "explain (analyze, format json, settings on, costs 'off', summary E'\\')', wal $x$)$x$) select ')'";
  CHECK(s.substr(read_shape(s).explained) == "select ')'");
  s = "explain (format \"json\", /* ) */ buffers) -- )\n(select 1)";
  CHECK(s.substr(read_shape(s).explained) == "(select 1)");
}

TEST_CASE("statements that are no read are refused by their first word") {
  const std::string accepted = "SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN";
  CHECK(refusal("copy (select 1) to program 'touch /tmp/x'") == "the statement begins with COPY, not with " + accepted);
  CHECK(refusal("  /* hidden */ -- too\n Delete from t") == "the statement begins with DELETE, not with " + accepted);
  for (const char* sql : {"do $$ begin end $$", "call p()", "insert into t values (1)", "update t set x = 1",
                          "merge into t using u on true when matched then delete", "create table t (x int)",
                          "begin", "commit; select 1", "rollback", "prepare p as select 1", "execute p",
                          "declare c cursor for select 1", "set role postgres", "reset role", "grant r to s",
                          "checkpoint", "listen x", "lock table t", "vacuum", "analyze t", "select1", "selectx 1",
                          "\"select\" 1", "; select 1", "$$x$$", "1"})
    CHECK_MESSAGE(refusal(sql).rfind("the statement begins with ", 0) == 0, sql);
  CHECK(refusal("commit; select 1") == "the statement begins with COMMIT, not with " + accepted);
  CHECK(refusal("\"select\" 1") == "the statement begins with \", not with " + accepted);
}

TEST_CASE("EXPLAIN only of a select") {
  const std::string what = ", not of a SELECT, WITH, VALUES or TABLE statement";
  CHECK(refusal("explain analyze delete from t") == "the statement is an EXPLAIN of DELETE" + what);
  CHECK(refusal("explain (analyze) create table t as select 1") == "the statement is an EXPLAIN of CREATE" + what);
  CHECK(refusal("explain execute p") == "the statement is an EXPLAIN of EXECUTE" + what);
  CHECK(refusal("explain (analyze ')') insert into t values (1)") == "the statement is an EXPLAIN of INSERT" + what);
  CHECK(refusal("explain (analyze") == "the statement is an EXPLAIN whose options or statement cannot be read");
  CHECK(refusal("explain (format 'json) select 1") == "the statement is an EXPLAIN whose options or statement cannot be read");
  CHECK(refusal("explain") == "the statement is an EXPLAIN whose options or statement cannot be read");
  CHECK(refusal("explain (costs (off)) select 1") == "the statement is an EXPLAIN whose options or statement cannot be read");
}

TEST_CASE("text that cannot be sent as it is") {
  CHECK(refusal(std::string("select 1\0; delete from t", 24)) == "the statement holds a NUL byte");
  CHECK(refusal("select '\xff'") == "the statement is not valid UTF-8: select '\\xFF'");
  CHECK(refusal("") == "the statement is empty");
  CHECK(refusal(" ;\n; ") == "the statement is empty");
  CHECK(refusal("-- only this") == "the statement is only a comment");
  CHECK(refusal("/* /* */ select 1") == "the statement does not parse: a /* comment is never closed");
  // An editor's byte order mark is not the statement's: it is dropped, once, at the start only.
  CHECK(statement_text("\xEF\xBB\xBFselect 1") == "select 1");
  CHECK(refusal("\xEF\xBB\xBF\xEF\xBB\xBFselect 1").rfind("the statement begins with \xEF\xBB\xBF", 0) == 0);
}

TEST_CASE("the server's verdict on the select check becomes the refusal") {
  CHECK(select_check_sql("select 1") == "DECLARE shardctl_query_check CURSOR FOR select 1");
  Shape select;
  CHECK(select_refusal(select, "0A000", "DECLARE CURSOR must not contain data-modifying statements in WITH") ==
        "the statement modifies data (its WITH holds an INSERT, UPDATE, DELETE or MERGE), not a read");
  CHECK(select_refusal(select, "42601", "SELECT ... INTO is not allowed here") ==
        "the statement is a SELECT INTO, which creates a table, not a read");
  Shape explain;
  explain.kind = StatementKind::explain;
  CHECK(select_refusal(explain, "42601", "syntax error at or near \"x\"") ==
        "the statement EXPLAIN explains is not one SELECT, WITH, VALUES or TABLE statement: syntax error at or near \"x\"");
}

TEST_CASE("a login that can do more than read is named with every reason") {
  CHECK_FALSE(privilege_refusal("reader", {{"reader", false, false}, {"pg_read_all_data", false, false}}));
  CHECK(privilege_refusal("postgres", {{"postgres", true, true}, {"pg_signal_backend", false, false}}) == "superuser");
  CHECK(privilege_refusal("repl", {{"pg_signal_backend", false, false}, {"repl", false, true}}) ==
        "REPLICATION, member of pg_signal_backend");
  CHECK(privilege_refusal("alice", {{"admins", true, false}, {"alice", false, false}}) == "member of superuser \"admins\"");
  CHECK(privilege_refusal("alice", {{"alice", false, false}, {"pg_execute_server_program", false, false},
                                    {"pg_signal_backend", false, false}, {"streamer", false, true}}) ==
        "member of pg_execute_server_program, member of pg_signal_backend, member of \"streamer\", which has REPLICATION");
  CHECK(privilege_refusal("alice", {{"alice", false, false}, {"pg_write_server_files", false, false}}) ==
        "member of pg_write_server_files");
  CHECK(privilege_refusal("alice", {{"alice", false, false}, {"pg_read_server_files", false, false}}) ==
        "member of pg_read_server_files");
  // Reading every table, settings and statistics is what the role is for.
  CHECK_FALSE(privilege_refusal("alice", {{"alice", false, false}, {"pg_read_all_data", false, false},
                                          {"pg_monitor", false, false}, {"pg_read_all_stats", false, false}}));
}

TEST_CASE("the read role replaces the DSN's user, quoted") {
  CHECK(dsn_with_user("host=h user=postgres", "shardctl_read") == "host=h user=postgres user='shardctl_read'");
  CHECK(dsn_with_user("host=h", "it's a\\b") == "host=h user='it\\'s a\\\\b'");
}
