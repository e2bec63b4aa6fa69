// An archive predicate is refused before anything changes when it does not parse as one boolean
// expression over the root table's columns (a subquery, another table, a missing column, text
// that would reach past its parentheses) or calls a volatile function; a valid one comes back
// as the server's rendering, which no text of the operator's can escape. Nothing it names is
// executed.
#include <doctest/doctest.h>

#include <cstdlib>

#include "archive/predicate.hpp"
#include "core/error.hpp"
#include "itest_pg.hpp"

using namespace shardctl;

namespace {

struct Checked {
  std::string rendered;  // empty when refused
  std::string refusal;   // empty when accepted
};

Checked check(shardio::RawConn& c, const std::string& table, const std::string& where) {
  try {
    return {archive::checked_predicate(c, "public", table, "public." + table, where), ""};
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    return {"", e.what()};
  }
}

bool refused_with(shardio::RawConn& c, const std::string& table, const std::string& where, const std::string& words) {
  auto r = check(c, table, where);
  if (r.refusal.find(words) != std::string::npos) return true;
  MESSAGE("predicate [" << where << "] gave [" << r.refusal << "] rendered [" << r.rendered << "], wanted [" << words << "]");
  return false;
}

std::string scalar(shardio::RawConn& c, const std::string& sql) { return c.query(sql)[0][0]; }

}  // namespace

TEST_CASE("archive predicates: one boolean expression over the root table, rendered by the server") {
  shardio::RawConn conn(itest::test_dsn(), "shard test");
  // Each SUBCASE runs the case again from the top: the schema is made once.
  if (scalar(conn, "SELECT to_regclass('public.orders') IS NULL") == "t")
    conn.script(
        "CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz, status text);"
        "CREATE TABLE other (id bigint);"
        "CREATE TABLE events (id bigint, at date) PARTITION BY RANGE (at);"
        "CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');"
        "CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');"
        "CREATE TABLE calls (n int);"
        // Functions that write: what an archive predicate must never run.
        "CREATE FUNCTION logged(k bigint) RETURNS boolean LANGUAGE plpgsql AS "
        "$$BEGIN INSERT INTO calls VALUES (1); RETURN k % 2 = 0; END$$;"
        "CREATE FUNCTION loud_text(x bigint) RETURNS text LANGUAGE plpgsql AS "
        "$$BEGIN INSERT INTO calls VALUES (2); RETURN x::text; END$$;"
        "CREATE FUNCTION logged_eq(a bigint, b bigint) RETURNS boolean LANGUAGE plpgsql AS "
        "$$BEGIN INSERT INTO calls VALUES (3); RETURN a = b; END$$;"
        "CREATE OPERATOR === (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = logged_eq);"
        "CREATE DOMAIN checked_id AS bigint CHECK (logged(VALUE));"
        "CREATE FUNCTION is_even(k bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$SELECT k % 2 = 0$$;"
        "CREATE FUNCTION is_old(t timestamptz) RETURNS boolean LANGUAGE sql STABLE AS $$SELECT t < now()$$;");

  SUBCASE("valid conditions come back as the server renders them") {
    CHECK(check(conn, "orders", "created_at < now() - interval '400 days'").rendered ==
          "(created_at < (now() - '400 days'::interval))");
    CHECK(check(conn, "orders", "status IN ('done', 'void') AND id % 2 = 0").rendered ==
          "((status = ANY (ARRAY['done'::text, 'void'::text])) AND ((id % (2)::bigint) = 0))");
    // Literals are read in the archive sessions' time zone (UTC), whatever the server's.
    CHECK(check(conn, "orders", "created_at < '2024-02-01'").rendered ==
          "(created_at < '2024-02-01 00:00:00+00'::timestamp with time zone)");
    CHECK(check(conn, "orders", "orders.id > 5").rendered == "(id > 5)");  // qualified by the table's name
    CHECK(check(conn, "events", "at < '2026-06-01'").rendered == "(at < '2026-06-01'::date)");  // partitioned root
    // Immutable and stable functions are fine, named with their schema.
    CHECK(check(conn, "orders", "is_even(id) AND is_old(created_at)").rendered ==
          "(public.is_even(id) AND public.is_old(created_at))");
    // Text that looks like a comment or a parenthesis inside a string is data.
    CHECK(check(conn, "orders", "status = 'a) OR (true --'").rendered == "(status = 'a) OR (true --'::text)");
  }

  SUBCASE("text that would reach past its parentheses is refused, with where") {
    CHECK(refused_with(conn, "orders", "id % 10 = 0) OR (id % 10 = 0",
                       "refused at character 12: ')' closes a parenthesis the predicate did not open"));
    CHECK(refused_with(conn, "orders", "true) or (true", "refused at character 5: ')' closes"));
    CHECK(refused_with(conn, "orders", "true); DROP TABLE other; --", "refused at character 5"));
    CHECK(refused_with(conn, "orders", "true; COMMIT", "refused at character 5: ';' would end the statement"));
    CHECK(refused_with(conn, "orders", "id > 1 -- )", "refused at character 8: a comment ('--') is not allowed"));
    CHECK(refused_with(conn, "orders", "id > 1 /* ) */", "a comment ('/*') is not allowed"));
    CHECK(refused_with(conn, "orders", std::string("true\0) OR (true", 15), "refused at character 5: it contains a NUL byte"));
    CHECK(refused_with(conn, "orders", "\xEF\xBB\xBFtrue", "refused at character 1: it contains a byte order mark"));
    CHECK(refused_with(conn, "orders", "status = '\xff'", "it is not UTF-8"));
    CHECK(refused_with(conn, "orders", "(id > 1", "refused at character 1: '(' is never closed"));
    CHECK(refused_with(conn, "orders", "status = 'x", "a string is never closed"));
    CHECK(refused_with(conn, "orders", "status = $q$x)", "dollar-quoted text is never closed"));
    CHECK(refused_with(conn, "orders", "   ", "is empty"));
    // Nothing ran: the tables are all there.
    CHECK(scalar(conn, "SELECT count(*) FROM pg_class WHERE relname IN ('orders', 'other')") == "2");
  }

  SUBCASE("the server's refusals name the predicate's own character") {
    CHECK(refused_with(conn, "orders", "created_at <", "not a valid condition on public.orders: syntax error at its end"));
    CHECK(refused_with(conn, "orders", "id > 1 or or id < 0", "syntax error at or near \"or\" (at character 11)"));
    // The server gives no position for what it finds after parsing (a CHECK has no source text).
    CHECK(refused_with(conn, "orders", "nosuch > 1", "column \"nosuch\" does not exist"));
    CHECK(refused_with(conn, "orders", "id + 1", "its value is of type bigint, not boolean"));
    CHECK(refused_with(conn, "orders", "count(*) > 1", "aggregate functions are not allowed in an archive predicate"));
    CHECK(refused_with(conn, "orders", "generate_series(1, 2) > 1", "set-returning functions are not allowed in an archive predicate"));
    CHECK(refused_with(conn, "orders", "id IN (SELECT id FROM other)", "a subquery is not allowed"));
    CHECK(refused_with(conn, "orders", "EXISTS (SELECT 1 FROM orders o WHERE o.id = orders.id)", "a subquery is not allowed"));
    CHECK(refused_with(conn, "orders", "other.id = 1", "missing FROM-clause entry for table \"other\""));
    CHECK(refused_with(conn, "nosuch", "true", "table public.nosuch does not exist"));
  }

  SUBCASE("volatile functions are refused by name, wherever the expression calls them, and never run") {
    CHECK(refused_with(conn, "orders", "logged(id)", "calls volatile function logged(bigint)"));
    CHECK(refused_with(conn, "orders", "random() < 0.5 AND clock_timestamp() > created_at",
                       "calls volatile functions clock_timestamp(), random()"));
    CHECK(refused_with(conn, "orders", "id === 4", "calls volatile function logged_eq(bigint,bigint)"));  // an operator
    CHECK(refused_with(conn, "orders", "(id, id) < (1, 2) OR (id, id) = (3, 4) OR id IN (1, 2) OR nullif(id, 1) === 2",
                       "logged_eq(bigint,bigint)"));
    CHECK(refused_with(conn, "orders", "id::checked_id > 1", "calls volatile function logged(bigint)"));  // a domain's CHECK
    CHECK(refused_with(conn, "orders", "loud_text(id) = 'x'", "calls volatile function loud_text(bigint)"));
    CHECK(scalar(conn, "SELECT count(*) FROM calls") == "0");
  }
}
