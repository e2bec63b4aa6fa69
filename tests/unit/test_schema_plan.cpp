#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "schema/plan.hpp"

using namespace shardctl::schema;
using shardctl::shardside::SchemaHistoryKind;
using shardctl::shardside::SchemaHistoryOutcome;

// The unity build puts this file beside others whose `using namespace` brings in another Cell
// (query::Cell): the tests live in a namespace of their own that names which one they mean.
namespace schema_plan_tests {
using shardctl::schema::Cell;

namespace {

Migration mig(const std::string& file, const std::string& sql) {
  Migration m;
  auto p = parse_file_name(file);
  m.kind = p->kind;
  m.version = p->version;
  m.description = p->description;
  m.file = file;
  m.sql = sql;
  m.checksum = checksum_of(sql);
  return m;
}

std::int64_t next_id = 1;
HistoryRow row(const Migration& m, bool success = true) {
  HistoryRow r;
  r.id = next_id++;
  if (m.version) r.version = m.version->text();
  r.name = m.file;
  r.kind = history_kind(m.kind);
  r.checksum = m.checksum;
  r.outcome = success ? SchemaHistoryOutcome::succeeded : SchemaHistoryOutcome::failed;
  return r;
}

HistoryRow baseline_marker(const std::string& v) {
  HistoryRow r;
  r.id = next_id++;
  r.version = v;
  r.name = "<baseline>";
  r.kind = SchemaHistoryKind::baseline;
  r.outcome = SchemaHistoryOutcome::succeeded;
  return r;
}

std::vector<std::string> files(const std::vector<Migration>& ms, const std::vector<std::size_t>& idx) {
  std::vector<std::string> out;
  for (auto i : idx) out.push_back(ms[i].file);
  return out;
}

const std::vector<Migration> dir{mig("V1__a.sql", "create table a();"), mig("V2__b.sql", "create table b();"),
                                 mig("V10__c.sql", "create table c();"), mig("R__views.sql", "create view v as select 1;")};

}  // namespace

TEST_CASE("an empty history: everything pending, in order, repeatables last") {
  auto p = plan_shard(dir, {});
  CHECK(files(dir, p.pending) == std::vector<std::string>{"V1__a.sql", "V2__b.sql", "V10__c.sql", "R__views.sql"});
  CHECK_FALSE(p.current);
  CHECK_FALSE(p.up_to_date());
}

TEST_CASE("applied files are not pending; the current version is the highest applied") {
  auto p = plan_shard(dir, {row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3])});
  CHECK(p.pending.empty());
  CHECK(p.up_to_date());
  CHECK(p.current->text() == "10");
  auto q = plan_shard(dir, {row(dir[0])});
  CHECK(files(dir, q.pending) == std::vector<std::string>{"V2__b.sql", "V10__c.sql", "R__views.sql"});
}

TEST_CASE("an applied versioned file with another checksum is changed, not pending") {
  auto edited = dir;
  edited[1] = mig("V2__b.sql", "create table b(x int);");
  auto p = plan_shard(edited, {row(dir[0]), row(dir[1])});
  REQUIRE(p.changed.size() == 1);
  CHECK(p.changed[0].file == "V2__b.sql");
  CHECK(p.changed[0].recorded == dir[1].checksum);
  CHECK(p.changed[0].actual == edited[1].checksum);
  CHECK(files(edited, p.pending) == std::vector<std::string>{"V10__c.sql", "R__views.sql"});
}

TEST_CASE("a repeatable file runs again when its checksum changes") {
  auto edited = dir;
  edited[3] = mig("R__views.sql", "create or replace view v as select 2;");
  auto p = plan_shard(edited, {row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3])});
  CHECK(files(edited, p.pending) == std::vector<std::string>{"R__views.sql"});
  CHECK(p.changed.empty());
  // Its latest successful row counts: after re-applying, nothing is pending.
  auto q = plan_shard(edited, {row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3]), row(edited[3])});
  CHECK(q.pending.empty());
}

TEST_CASE("a failed attempt is reported and retried until a later success closes it") {
  auto p = plan_shard(dir, {row(dir[0]), row(dir[1], false)});
  CHECK(p.failed == std::vector<std::string>{"V2__b.sql"});
  CHECK(files(dir, p.pending) == std::vector<std::string>{"V2__b.sql", "V10__c.sql", "R__views.sql"});
  CHECK(p.current->text() == "1");
  auto q = plan_shard(dir, {row(dir[0]), row(dir[1], false), row(dir[1])});
  CHECK(q.failed.empty());
}

TEST_CASE("a baseline covers versions up to its own; files recorded with it keep their checksum check") {
  auto p = plan_shard(dir, {baseline_marker("2")});
  CHECK(files(dir, p.pending) == std::vector<std::string>{"V10__c.sql", "R__views.sql"});
  CHECK(p.current->text() == "2");
  CHECK(p.baseline->text() == "2");
  auto with_file = row(dir[0]);
  with_file.kind = SchemaHistoryKind::baseline;
  with_file.checksum = "sha256:other";
  auto q = plan_shard(dir, {with_file, baseline_marker("2")});
  REQUIRE(q.changed.size() == 1);
  CHECK(q.changed[0].file == "V1__a.sql");
}

TEST_CASE("out-of-order and unknown versions are noted") {
  auto p = plan_shard(dir, {row(dir[0]), row(dir[2])});
  CHECK(p.out_of_order == std::vector<std::string>{"V2__b.sql"});
  CHECK(files(dir, p.pending) == std::vector<std::string>{"V2__b.sql", "R__views.sql"});
  std::vector<Migration> older(dir.begin(), dir.begin() + 1);
  auto q = plan_shard(older, {row(dir[0]), row(dir[1])});
  CHECK(q.unknown == std::vector<std::string>{"V2__b.sql"});
}

TEST_CASE("status against a directory: cells, states and the exit code") {
  std::vector<ShardHistory> shards{
      {"s1", std::vector<HistoryRow>{row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3])}, ""},
      {"s2", std::vector<HistoryRow>{row(dir[0])}, ""},
  };
  auto m = status_against_directory(dir, shards);
  CHECK(m.head == "10");
  REQUIRE(m.columns.size() == 4);
  CHECK(m.rows[0].state == StatusState::current);
  CHECK(m.rows[0].version == "10");
  CHECK(m.rows[1].state == StatusState::pending);
  CHECK(m.rows[1].cells == std::vector<Cell>{{CellState::ok}, {CellState::pending}, {CellState::pending}, {CellState::pending}});
  CHECK(m.exit_code() == 1);
  shards.push_back({"s3", std::nullopt, "cannot connect"});
  CHECK(status_against_directory(dir, shards).exit_code() == 3);
  shards.push_back({"s4", std::vector<HistoryRow>{row(dir[0]), row(dir[1], false)}, ""});
  auto f = status_against_directory(dir, shards);
  CHECK(f.rows[3].state == StatusState::failed);
  CHECK(f.rows[3].cells[1] == Cell{CellState::failed});
  CHECK(f.exit_code() == 2);
  std::vector<ShardHistory> current{{"s1", std::vector<HistoryRow>{row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3])}, ""}};
  CHECK(status_against_directory(dir, current).exit_code() == 0);
  auto edited = dir;
  edited[0] = mig("V1__a.sql", "create table a(x int);");
  auto c = status_against_directory(edited, current);
  CHECK(c.rows[0].state == StatusState::changed);
  CHECK(c.rows[0].cells[0] == Cell{CellState::changed});
  CHECK(c.exit_code() == 1);
}

TEST_CASE("status between shards: the head is the highest version any shard has") {
  std::vector<ShardHistory> shards{
      {"s1", std::vector<HistoryRow>{row(dir[0]), row(dir[1])}, ""},
      {"s2", std::vector<HistoryRow>{row(dir[0])}, ""},
      {"s3", std::vector<HistoryRow>{baseline_marker("2")}, ""},
  };
  auto m = status_between_shards(shards);
  CHECK(m.head == "2");
  CHECK(m.rows[0].state == StatusState::current);
  CHECK(m.rows[1].state == StatusState::pending);
  CHECK(m.rows[2].state == StatusState::current);
  CHECK(m.exit_code() == 1);
  std::vector<ShardHistory> same{{"s1", std::vector<HistoryRow>{row(dir[0])}, ""}, {"s2", std::vector<HistoryRow>{row(dir[0])}, ""}};
  CHECK(status_between_shards(same).exit_code() == 0);
  same.push_back({"s3", std::vector<HistoryRow>{row(dir[0]), row(dir[1], false)}, ""});
  auto f = status_between_shards(same);
  CHECK(f.rows[2].state == StatusState::failed);
  CHECK(f.exit_code() == 2);
}

TEST_CASE("a file started and never finished is neither pending nor failed: it is started until a later row") {
  auto make_started = [] {
    auto r = row(dir[1], false);
    r.outcome = SchemaHistoryOutcome::unfinished;
    r.applied_at = "2026-11-25 10:00:00+00";
    r.applied_by = "postgres";
    return r;
  };
  auto started = make_started();
  auto p = plan_shard(dir, {row(dir[0]), started});
  CHECK(files(dir, p.pending) == std::vector<std::string>{"V10__c.sql", "R__views.sql"});
  REQUIRE(p.started.size() == 1);
  CHECK(p.started[0].file == "V2__b.sql");
  CHECK(p.started[0].at == "2026-11-25 10:00:00+00");
  CHECK(p.failed.empty());
  CHECK_FALSE(p.up_to_date());
  CHECK(file_state({row(dir[0]), started}, dir[1]) == RecordedState::started);
  // A retry that started after a failure: the file is started, not failed.
  auto failure = row(dir[1], false);
  auto p2 = plan_shard(dir, {row(dir[0]), failure, make_started()});
  CHECK(p2.failed.empty());
  CHECK(p2.started.size() == 1);
  // A repair row closes it: marked applied (a success), or marked failed (retried, reported failed).
  auto p3 = plan_shard(dir, {row(dir[0]), started, row(dir[1], true)});
  CHECK(p3.started.empty());
  CHECK(files(dir, p3.pending) == std::vector<std::string>{"V10__c.sql", "R__views.sql"});
  auto p4 = plan_shard(dir, {row(dir[0]), started, row(dir[1], false)});
  CHECK(p4.started.empty());
  CHECK(p4.failed == std::vector<std::string>{"V2__b.sql"});
  CHECK(files(dir, p4.pending) == std::vector<std::string>{"V2__b.sql", "V10__c.sql", "R__views.sql"});
  CHECK(file_state({row(dir[0]), started, row(dir[1], false)}, dir[1]) == RecordedState::failed);
  CHECK(file_state({row(dir[0])}, dir[1]) == RecordedState::not_run);
  CHECK(file_state({baseline_marker("2")}, dir[1]) == RecordedState::applied);
}

TEST_CASE("status: a started file is interrupted (2) unless the rollout lock is held (running, 1)") {
  auto started = row(dir[1], false);
  started.outcome = SchemaHistoryOutcome::unfinished;
  std::vector<HistoryRow> hist{row(dir[0]), started};
  ShardHistory free_lock{"s1", hist, "", false, {}};
  auto m = status_against_directory(dir, {free_lock});
  CHECK(m.rows[0].state == StatusState::interrupted);
  CHECK(m.rows[0].cells[1] == Cell{CellState::started});
  CHECK(m.exit_code() == 2);
  ShardHistory held{"s1", hist, "", true, {}};
  auto m2 = status_against_directory(dir, {held});
  CHECK(m2.rows[0].state == StatusState::running);
  CHECK(m2.exit_code() == 1);
  auto between = status_between_shards({free_lock});
  CHECK(between.rows[0].state == StatusState::interrupted);
  CHECK(between.exit_code() == 2);
}

TEST_CASE("status: an INVALID index a file creates makes its cell invalid and the shard invalid_index (2)") {
  std::vector<HistoryRow> hist{row(dir[0]), row(dir[1]), row(dir[2]), row(dir[3])};
  ShardHistory h{"s1", hist, "", false, {{"public.i", "public.b", "DROP INDEX CONCURRENTLY IF EXISTS public.i;", "V2__b.sql"}}};
  auto m = status_against_directory(dir, {h});
  CHECK(m.rows[0].state == StatusState::invalid_index);
  CHECK(m.rows[0].cells[1] == Cell{CellState::invalid});
  CHECK(m.rows[0].cells[0] == Cell{CellState::ok});
  CHECK(m.exit_code() == 2);
}

TEST_CASE("a file saved with a byte order mark matches the checksum recorded before the mark was left out") {
  auto m = mig("V1__a.sql", "create table a();");
  m.checksum_with_bom = checksum_of("\xEF\xBB\xBF" + m.sql);
  auto old = row(m);
  old.checksum = *m.checksum_with_bom;
  auto p = plan_shard({m}, {old});
  CHECK(p.changed.empty());
  CHECK(p.pending.empty());
  auto other = old;
  other.checksum = checksum_of("something else");
  CHECK(plan_shard({m}, {other}).changed.size() == 1);
}

}  // namespace schema_plan_tests
