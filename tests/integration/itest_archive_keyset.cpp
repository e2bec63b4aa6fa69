// The keyset walk covers every row that matches the predicate up to the bound fixed at the
// start, each exactly once, over a composite text/bigint key; a row inserted above the bound
// after the start waits for the next run.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "archive/keyset.hpp"
#include "itest_pg.hpp"
#include "pg/connection.hpp"

using namespace shardctl;

TEST_CASE("keyset batches walk (cursor, upper] exactly once") {
  pg::Connection conn(itest::test_dsn(), "shard test");
  conn.transact([](pqxx::work& tx) {
    tx.exec("CREATE TABLE \"Orders\" (tenant text, id bigint, done bool, PRIMARY KEY (tenant, id))");
    tx.exec("INSERT INTO \"Orders\" SELECT t, i, i % 3 <> 0 FROM unnest(ARRAY['a','b b','c']) t, "
            "generate_series(1, 20) i");
  });
  archive::Keyset k{"public.\"Orders\"", {{"tenant", "text"}, {"id", "bigint"}}, "done"};
  std::vector<std::string> upper;
  conn.read([&](pqxx::work& tx) {
    auto r = tx.exec(k.upper_bound_sql());
    upper = {r[0][0].as<std::string>(), r[0][1].as<std::string>()};
  });
  conn.transact([](pqxx::work& tx) { tx.exec("INSERT INTO \"Orders\" VALUES ('zz', 1, true)"); });  // after the start

  std::optional<std::vector<std::string>> cursor;
  std::multiset<std::string> seen;
  int batches = 0;
  for (;;) {
    std::optional<std::vector<std::string>> end;
    conn.read([&](pqxx::work& tx) {
      pqxx::result r;
      if (cursor)
        r = tx.exec_params(k.batch_end_sql(true), (*cursor)[0], (*cursor)[1], upper[0], upper[1], 7);
      else
        r = tx.exec_params(k.batch_end_sql(false), upper[0], upper[1], 7);
      if (!r.empty()) end = std::vector<std::string>{r[0][0].as<std::string>(), r[0][1].as<std::string>()};
    });
    if (!end) break;
    ++batches;
    conn.read([&](pqxx::work& tx) {
      pqxx::result r = cursor ? tx.exec_params("SELECT tenant || ':' || id FROM public.\"Orders\" WHERE " +
                                                   k.batch_filter(true),
                                               (*cursor)[0], (*cursor)[1], (*end)[0], (*end)[1])
                              : tx.exec_params("SELECT tenant || ':' || id FROM public.\"Orders\" WHERE " +
                                                   k.batch_filter(false),
                                               (*end)[0], (*end)[1]);
      CHECK(r.size() <= 7);
      for (const auto& row : r) seen.insert(row[0].as<std::string>());
    });
    cursor = end;
  }
  CHECK(seen.size() == 42);  // 3 tenants x the 14 of 20 ids with id % 3 <> 0
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == seen.size());
  CHECK(seen.count("zz:1") == 0);
  CHECK(batches == 6);
}
