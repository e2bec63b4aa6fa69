#include <doctest/doctest.h>

#include <sstream>

#include "schema/report.hpp"

using namespace shardctl;
using namespace shardctl::schema;

namespace {
Migration mig(const std::string& file) {
  Migration m;
  auto p = parse_file_name(file);
  m.kind = p->kind;
  m.version = p->version;
  m.file = file;
  m.sql = "select 1;";
  m.checksum = checksum_of(m.sql);
  return m;
}
}  // namespace

TEST_CASE("apply JUnit: one case per shard and file; failures, skips and connect failures") {
  std::vector<Migration> ms{mig("V1__a.sql"), mig("V2__b.sql"), mig("R__v.sql")};
  ApplyResult r;
  ShardReport ok;
  ok.shard = "s1";
  ok.state = ShardState::ok;
  ok.planned = {"V2__b.sql", "R__v.sql"};
  ok.files = {{"V2__b.sql", "2", Kind::versioned, FileRunState::applied, 1500, ""},
              {"R__v.sql", "", Kind::repeatable, FileRunState::applied, 10, ""}};
  ShardReport failed;
  failed.shard = "s2";
  failed.state = ShardState::failed;
  failed.planned = {"V1__a.sql", "V2__b.sql", "R__v.sql"};
  failed.files = {{"V1__a.sql", "1", Kind::versioned, FileRunState::failed, 5, "V1__a.sql:1:8: syntax error"}};
  failed.hint = "look at it";
  failed.invalid_indexes = {{"public.i", "public.t", "DROP INDEX CONCURRENTLY IF EXISTS public.i;"}};
  ShardReport down;
  down.shard = "s3";
  down.state = ShardState::unreachable;
  down.error = "cannot connect";
  ShardReport skipped;
  skipped.shard = "s4";
  r.plan = {{"s1", PlannedState::pending, "1", {"V2__b.sql", "R__v.sql"}, {}, {}, {}, ""},
            {"s2", PlannedState::pending, "", {"V1__a.sql", "V2__b.sql", "R__v.sql"}, {}, {}, {}, ""},
            {"s3", PlannedState::unreachable, "", {}, {}, {}, {}, "cannot connect"},
            {"s4", PlannedState::pending, "1", {"V2__b.sql"}, {}, {}, {}, ""}};
  r.shards = {ok, failed, down, skipped};
  auto cases = junit_cases(r, ms);
  REQUIRE(cases.size() == 3 + 3 + 1 + 3);
  CHECK(cases[0].name == "V1__a.sql");  // applied before: passed
  CHECK_FALSE(cases[0].failure);
  CHECK_FALSE(cases[0].skipped);
  CHECK(cases[1].seconds == doctest::Approx(1.5));
  CHECK(*cases[3].failure == "V1__a.sql:1:8: syntax error");
  CHECK(cases[3].details.find("DROP INDEX CONCURRENTLY IF EXISTS public.i;") != std::string::npos);
  CHECK(cases[4].skipped);  // not reached after the failure
  CHECK(cases[6].classname == "shardctl.schema.apply.s3");
  CHECK(cases[6].name == "connect");
  CHECK(*cases[6].failure == "cannot connect");
  CHECK_FALSE(cases[7].skipped);  // s4 never started, but V1 it already has
  CHECK(cases[8].skipped);
  CHECK_FALSE(cases[9].skipped);  // R__v.sql was not pending on s4

  auto doc = to_json(r);
  CHECK(doc["summary"]["ok"] == 1);
  CHECK(doc["summary"]["failed"] == 1);
  CHECK(doc["shards"][1]["invalid_indexes"][0]["drop"] == "DROP INDEX CONCURRENTLY IF EXISTS public.i;");
  std::ostringstream text;
  print_apply(text, r);
  CHECK(text.str().find("4 shard(s): 1 ok, 1 failed, 1 unreachable, 1 skipped") != std::string::npos);
  CHECK(text.str().find("s2: index public.i on public.t is INVALID") != std::string::npos);
}

TEST_CASE("status JUnit and JSON: pending, failed and changed cells fail; unreachable is one case") {
  StatusMatrix m;
  m.columns = {{"V1__a.sql", Kind::versioned}, {"V2__b.sql", Kind::versioned}};
  m.head = "2";
  m.rows = {{"s1", StatusState::current, "2", {{CellState::ok}, {CellState::baseline}}, ""},
            {"s2", StatusState::failed, "1", {{CellState::ok}, {CellState::failed}}, ""},
            {"s3", StatusState::pending, "1", {{CellState::changed}, {CellState::pending}}, ""},
            {"s4", StatusState::unreachable, "", {}, "down"}};
  auto cases = junit_cases(m);
  REQUIRE(cases.size() == 7);
  CHECK_FALSE(cases[0].failure);
  CHECK_FALSE(cases[1].failure);
  CHECK(cases[3].failure);
  CHECK(cases[4].failure);
  CHECK(cases[5].failure);
  CHECK(cases[6].name == "connect");
  auto doc = to_json(m);
  CHECK(doc["exit_code"] == 2);
  CHECK(doc["shards"][2]["migrations"]["V1__a.sql"] == "changed");
  CHECK(doc["shards"][3]["version"].is_null());
  std::ostringstream text;
  print_status(text, m);
  CHECK(text.str().rfind("SHARD  STATE        VERSION  V1       V2", 0) == 0);
  CHECK(text.str().find("CHANGED") != std::string::npos);
}

TEST_CASE("apply JUnit: a shard stopped at an interrupted file is one failed case, never a passed file") {
  ApplyResult r;
  ShardReport s;
  s.shard = "s1";
  s.state = ShardState::failed;
  s.error = "V2__x.sql started at t (by u) and never finished";
  s.hint = "check";
  s.invalid_indexes.push_back({"public.i", "public.t", "DROP INDEX CONCURRENTLY IF EXISTS public.i;", "V2__x.sql"});
  r.shards.push_back(s);
  Migration m;
  m.file = "V2__x.sql";
  auto cases = junit_cases(r, {m});
  REQUIRE(cases.size() == 1);
  CHECK(cases[0].name == "shard");
  CHECK(cases[0].failure == s.error);
  CHECK(cases[0].details == "check\nDROP INDEX CONCURRENTLY IF EXISTS public.i;");
  auto json = to_json(r);
  CHECK(json["shards"][0]["invalid_indexes"][0]["file"] == "V2__x.sql");
}
