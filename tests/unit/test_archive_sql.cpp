#include <doctest/doctest.h>

#include <string>

#include "archive/archive_set.hpp"
#include "archive/job.hpp"
#include "core/error.hpp"

using namespace shardctl;
using namespace shardctl::archive;

namespace {

// customers <- orders <- order_lines, as discover_archive_set() would read them.
ArchiveSet chain(bool cascade) {
  ArchiveSet set;
  set.cascade = cascade;
  ArchivedTable c{"public.customers", "public", "customers", "\"public\".\"customers\"", "t0", -1, {}, {},
                  {{"customer_id", "bigint"}, {"created_at", "date"}}, {"customer_id"}};
  ArchivedTable o{"public.orders", "public", "orders", "\"public\".\"orders\"", "t1", 0, {"customer_id"}, {"customer_id"},
                  {{"customer_id", "bigint"}, {"order_id", "integer"}}, {"customer_id", "order_id"}};
  ArchivedTable l{"public.order_lines", "public", "order_lines", "\"public\".\"order_lines\"", "t2", 1,
                  {"customer_id", "order_id"}, {"customer_id", "order_id"},
                  {{"customer_id", "bigint"}, {"order_id", "integer"}, {"line_no", "integer"}}, {}};
  set.tables.push_back(c);
  if (cascade) {
    set.tables.push_back(o);
    set.tables.push_back(l);
  } else {
    set.referencing.push_back(o);
  }
  set.keyset.table = c.quoted;
  set.keyset.key = {{"customer_id", "bigint"}};
  set.keyset.predicate = "created_at < '2024-03-01'";
  return set;
}

}  // namespace

TEST_CASE("a batch's rows: the keyset range and the predicate, nested down the foreign keys") {
  auto set = chain(true);
  std::string low = set.keyset.literal_row({"'10'"}), high = set.keyset.literal_row({"'20'"});
  CHECK(low == "('10'::bigint)");
  auto root = set.root_filter(&low, high);
  CHECK(root == "(\"customer_id\") > ('10'::bigint) AND (\"customer_id\") <= ('20'::bigint) AND (created_at < '2024-03-01')");
  CHECK(set.root_filter(nullptr, high) == "(\"customer_id\") <= ('20'::bigint) AND (created_at < '2024-03-01')");
  auto preds = set.predicates(root);
  REQUIRE(preds.size() == 3);
  CHECK(preds[0] == root);
  CHECK(preds[1] == "(t1.\"customer_id\") IN (SELECT t0.\"customer_id\" FROM \"public\".\"customers\" t0 WHERE " + root + ")");
  CHECK(preds[2] == "(t2.\"customer_id\", t2.\"order_id\") IN (SELECT t1.\"customer_id\", t1.\"order_id\" FROM "
                    "\"public\".\"orders\" t1 WHERE " + preds[1] + ")");
  CHECK(set.select_sql(2, preds[2]) ==
        "SELECT t2.\"customer_id\", t2.\"order_id\", t2.\"line_no\" FROM \"public\".\"order_lines\" t2 WHERE " + preds[2]);
  CHECK(set.select_sql(0, "true", "'s'::text") ==
        "SELECT t0.\"customer_id\", t0.\"created_at\", 's'::text FROM \"public\".\"customers\" t0 WHERE true");
}

TEST_CASE("without --cascade, a root row that is still referenced stays and is counted as refused") {
  auto set = chain(false);
  std::string high = set.keyset.literal_row({"'20'"});
  auto root = set.root_filter(nullptr, high);
  CHECK(root.find("AND NOT EXISTS (SELECT 1 FROM \"public\".\"orders\" shardctl_ref0 WHERE shardctl_ref0.\"customer_id\" = "
                  "t0.\"customer_id\")") != std::string::npos);
  auto refused = set.refused_filter(nullptr, high);
  CHECK(refused.find("AND (EXISTS (SELECT 1 FROM \"public\".\"orders\" shardctl_ref0") != std::string::npos);
  CHECK(set.predicates(root).size() == 1);
  // No referencing table: nothing is ever refused.
  set.referencing.clear();
  CHECK(set.refused_filter(nullptr, high).find("AND (false)") != std::string::npos);
}

TEST_CASE("a job survives the journal: what a resumed run archives is what it started with") {
  Job job;
  job.name = "old-orders";
  job.table = "public.orders";
  job.where = "ordered_at < now() - interval '400 days'";
  job.cascade = true;
  job.to = parse_destination("postgres:host=arch dbname=archive");
  job.batch_size = 250;
  job.sleep = std::chrono::milliseconds(500);
  auto back = job_from_json(to_json(job));
  CHECK(back.same_rows(job));
  CHECK(back.name == "old-orders");
  CHECK(back.batch_size == 250);
  CHECK(back.sleep == std::chrono::milliseconds(500));
  CHECK(!back.max_runtime);
  Job other = job;
  other.where = "true";
  CHECK(!other.same_rows(job));
  other = job;
  other.to = parse_destination("dir:/var/lib/archive");
  CHECK(!other.same_rows(job));
  CHECK_THROWS_AS(job_from_json(nlohmann::json{{"job", "x"}}), Error);
  CHECK(adhoc_job_name("public.orders") == "table:public.orders");
}
