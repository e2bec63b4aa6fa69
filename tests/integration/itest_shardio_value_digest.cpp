// The value digest (shardio/value_digest.hpp) that shardctl computes over a binary COPY stream
// equals the one the server computes in SQL, column by column and for whole rows, on 50,000
// rows of random values of every covered type (NULLs, NaN and infinities, BC dates, numerics
// of many scales, non-ASCII text). Needs SHARDCTL_TEST_DSN (run_cxx_test.sh); without it the
// test fails rather than skips. The data come from setseed(), so a failure reproduces.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "itest_pg.hpp"
#include "shardio/copy_digest.hpp"
#include "shardio/value_digest.hpp"

using namespace shardctl::shardio;

namespace {

using itest::Conn;
using itest::connect;
using itest::Result;

std::string query_one(PGconn* c, const std::string& sql) {
  Result r(PQexec(c, sql.c_str()));
  REQUIRE_MESSAGE(PQresultStatus(r.get()) == PGRES_TUPLES_OK, std::string(PQresultErrorMessage(r.get())));
  return PQgetvalue(r.get(), 0, 0);
}

void exec(PGconn* c, const std::string& sql) {
  Result r(PQexec(c, sql.c_str()));
  auto st = PQresultStatus(r.get());
  REQUIRE_MESSAGE((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK), std::string(PQresultErrorMessage(r.get())));
}

// The client's value digest of COPY (SELECT columns FROM vd) TO STDOUT (FORMAT binary).
std::string client_digest(PGconn* c, const std::vector<ValueColumn>& cols) {
  std::string list;
  std::vector<ValueKind> kinds;
  for (const auto& col : cols) {
    list += (list.empty() ? "" : ", ") + col.quoted;
    kinds.push_back(col.kind);
  }
  Result r(PQexec(c, ("COPY (SELECT " + list + " FROM vd) TO STDOUT (FORMAT binary)").c_str()));
  REQUIRE(PQresultStatus(r.get()) == PGRES_COPY_OUT);
  CopyDigest d(true, kinds);
  char* buf = nullptr;
  int n;
  while ((n = PQgetCopyData(c, &buf, 0)) > 0) {
    d.add(std::string_view(buf, static_cast<std::size_t>(n)));
    PQfreemem(buf);
  }
  REQUIRE(n == -1);
  Result done(PQgetResult(c));
  REQUIRE(PQresultStatus(done.get()) == PGRES_COMMAND_OK);
  REQUIRE(d.complete());
  return d.value_text();
}

}  // namespace

TEST_CASE("the value digest of a COPY stream equals the server's, per column and per row") {
  auto conn = connect();
  PGconn* c = conn.get();
  // A zone with daylight saving time: a timestamptz's hash must not depend on the session's.
  exec(c, "SET TimeZone = 'America/New_York'");
  exec(c, "SELECT setseed(0.2026)");
  exec(c, R"SQL(
CREATE TEMP TABLE vd AS
SELECT i AS id,
  CASE WHEN random() < 0.05 THEN NULL ELSE (floor(random() * 65536) - 32768)::int2 END AS i2,
  CASE WHEN random() < 0.05 THEN NULL ELSE (floor(random() * 4294967296) - 2147483648)::int4 END AS i4,
  CASE WHEN random() < 0.05 THEN NULL ELSE ((random() - 0.5) * 1.8e19)::numeric::int8 END AS i8,
  CASE WHEN random() < 0.05 THEN NULL ELSE random() < 0.5 END AS b,
  CASE WHEN random() < 0.02 THEN 'infinity'::date WHEN random() < 0.02 THEN '-infinity'::date
       WHEN random() < 0.05 THEN NULL ELSE date '2000-01-01' + (floor(random() * 2000000) - 1000000)::int END AS d,
  CASE WHEN random() < 0.02 THEN 'infinity'::timestamp WHEN random() < 0.05 THEN NULL
       ELSE timestamp '2000-01-01' + (random() - 0.5) * interval '3000 years' END AS ts,
  CASE WHEN random() < 0.02 THEN '-infinity'::timestamptz WHEN random() < 0.05 THEN NULL
       ELSE timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '300 years' END AS tstz,
  CASE WHEN i % 17 = 0 THEN NULL
       ELSE (SELECT coalesce(string_agg(chr(32 + floor(random() * 2000)::int), ''), '') FROM generate_series(1, i % 23)) END AS t,
  CASE WHEN i % 19 = 0 THEN NULL ELSE left(md5(random()::text), (i % 30))::varchar(30) END AS v,
  CASE WHEN i % 13 = 0 THEN NULL ELSE gen_random_uuid() END AS u,
  CASE WHEN random() < 0.02 THEN 'NaN'::numeric WHEN random() < 0.02 THEN 'Infinity'::numeric
       WHEN random() < 0.02 THEN '-Infinity'::numeric WHEN random() < 0.05 THEN NULL WHEN random() < 0.05 THEN 0::numeric(10,3)
       ELSE round(((random() - 0.5) * power(10, floor(random() * 40) - 20))::numeric, floor(random() * 25)::int) END AS n,
  CASE WHEN random() < 0.02 THEN 'NaN'::numeric(12,2) WHEN random() < 0.05 THEN NULL WHEN random() < 0.05 THEN 0
       WHEN random() < 0.05 THEN -0.001 ELSE ((random() - 0.5) * power(10, floor(random() * 12) - 2))::numeric(12,2) END::numeric(12,2) AS nf,
  CASE WHEN random() < 0.05 THEN NULL ELSE ((random() - 0.5) * 1e6)::numeric(6,-2) END AS nneg
FROM generate_series(1, 50000) i
)SQL");
  std::vector<ValueColumn> cols = {{"i2", ValueKind::int2},       {"i4", ValueKind::int4},
                                   {"i8", ValueKind::int8},       {"b", ValueKind::boolean},
                                   {"d", ValueKind::date},        {"ts", ValueKind::timestamp},
                                   {"tstz", ValueKind::timestamptz}, {"t", ValueKind::text},
                                   {"v", ValueKind::text},        {"u", ValueKind::uuid},
                                   {"n", ValueKind::numeric},     {"nf", ValueKind::numeric_fixed},
                                   {"nneg", ValueKind::numeric_fixed}};
  // Each column alone (seed 1), then whole rows (seeds by position).
  for (const auto& col : cols) {
    std::string server = query_one(c, "SELECT " + value_digest_sql({col}) + " FROM vd");
    CHECK_MESSAGE(client_digest(c, {col}) == server, "column " << col.quoted);
  }
  // The same timestamptz digest in another zone (one without daylight saving time).
  std::string tstz_here = query_one(c, "SELECT " + value_digest_sql({{"tstz", ValueKind::timestamptz}}) + " FROM vd");
  exec(c, "SET TimeZone = 'Asia/Kolkata'");
  CHECK(query_one(c, "SELECT " + value_digest_sql({{"tstz", ValueKind::timestamptz}}) + " FROM vd") == tstz_here);
  exec(c, "SET TimeZone = 'America/New_York'");
  // numeric(p,s) leaves the scale to the type but not the sign: negated values differ.
  CHECK(query_one(c, "SELECT " + value_digest_sql({{"nf", ValueKind::numeric_fixed}}) + " FROM (SELECT -nf AS nf FROM vd) x") !=
        query_one(c, "SELECT " + value_digest_sql({{"nf", ValueKind::numeric_fixed}}) + " FROM vd"));
  // The portable form of a numeric's hash (its text), and a NOT NULL column without coalesce().
  CHECK(client_digest(c, {{"n", ValueKind::numeric_text}}) == query_one(c, "SELECT " + value_digest_sql({{"n", ValueKind::numeric_text}}) + " FROM vd"));
  ValueColumn id_not_null{"id", ValueKind::int4, true};
  CHECK(client_digest(c, {id_not_null}) == query_one(c, "SELECT " + value_digest_sql({id_not_null}) + " FROM vd"));
  // This server hashes numerics as the client does (both little-endian here).
  CHECK(numeric_probe_matches(query_one(c, numeric_probe_sql)));
  CHECK_FALSE(numeric_probe_matches("12345"));
  std::string server = query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd");
  CHECK(server.rfind("50000:", 0) == 0);
  CHECK(client_digest(c, cols) == server);
  // The digest sees a change of one value (a numeric's scale alone).
  exec(c, "UPDATE vd SET n = n + 0.000 WHERE id = (SELECT min(id) FROM vd WHERE n IS NOT NULL AND n::text NOT LIKE '%.%' AND n <> 'NaN' AND n NOT IN ('Infinity', '-Infinity'))");
  CHECK(query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd") != server);
  CHECK(client_digest(c, cols) == query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd"));
  // ... and its sign alone, and NaN against Infinity (hash_numeric_extended alone sees neither).
  std::string before = query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd");
  exec(c, "UPDATE vd SET n = -n WHERE id = (SELECT min(id) FROM vd WHERE n > 0)");
  std::string negated = query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd");
  CHECK(negated != before);
  CHECK(client_digest(c, cols) == negated);
  exec(c, "UPDATE vd SET n = 'Infinity' WHERE id = (SELECT min(id) FROM vd WHERE n = 'NaN')");
  CHECK(query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd") != negated);
  CHECK(client_digest(c, cols) == query_one(c, "SELECT " + value_digest_sql(cols) + " FROM vd"));
}
