// Comparing shard structures without a database: majority and reference, missing / extra /
// different, ties, children of a missing table folded into it, --ignore globs.
#include <doctest/doctest.h>

#include <algorithm>

#include "drift/compare.hpp"

using namespace shardctl::drift;

namespace {

Snapshot snap(std::string shard, std::vector<Object> objects) {
  std::sort(objects.begin(), objects.end(), [](const Object& a, const Object& b) { return a.key < b.key; });
  return {std::move(shard), std::move(objects)};
}

std::vector<Object> base() {
  return {{"table:public.orders", "", "table"},
          {"column:public.orders.id", "table:public.orders", "bigint NOT NULL"},
          {"column:public.orders.status", "table:public.orders", "text DEFAULT 'new'::text"},
          {"index:public.orders_pkey", "table:public.orders", "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)"}};
}

}  // namespace

TEST_CASE("identical shards have no differences") {
  auto out = compare({snap("a", base()), snap("b", base()), snap("c", base())}, std::nullopt);
  REQUIRE(out.size() == 3);
  for (const auto& s : out) CHECK(s.differences.empty());
  CHECK(fingerprint(base()) == fingerprint(base()));
}

TEST_CASE("the majority decides; the odd shard gets extra, missing and different with both definitions") {
  auto c = base();
  c.push_back({"column:public.orders.note", "table:public.orders", "text"});
  c[2].definition = "text DEFAULT 'open'::text";
  std::erase_if(c, [](const Object& o) { return o.key == "index:public.orders_pkey"; });
  auto out = compare({snap("a", base()), snap("b", base()), snap("c", c)}, std::nullopt);
  CHECK(out[0].differences.empty());
  CHECK(out[1].differences.empty());
  REQUIRE(out[2].differences.size() == 3);
  const auto& d = out[2].differences;
  CHECK(d[0].key == "column:public.orders.note");
  CHECK(d[0].change == Change::extra);
  CHECK(d[0].actual == "text");
  CHECK(d[1].key == "column:public.orders.status");
  CHECK(d[1].change == Change::different);
  CHECK(d[1].expected == "text DEFAULT 'new'::text");
  CHECK(d[1].actual == "text DEFAULT 'open'::text");
  CHECK(d[2].key == "index:public.orders_pkey");
  CHECK(d[2].change == Change::missing);
  CHECK(fingerprint(c) != fingerprint(base()));
}

TEST_CASE("a reference shard is the expectation even when it is the odd one") {
  auto c = base();
  c[1].definition = "integer NOT NULL";
  auto out = compare({snap("a", base()), snap("b", base()), snap("c", c)}, std::string("c"));
  CHECK(out[2].differences.empty());
  REQUIRE(out[0].differences.size() == 1);
  CHECK(out[0].differences[0].expected == "integer NOT NULL");
  CHECK(out[0].differences[0].actual == "bigint NOT NULL");
  CHECK(out[1].differences.size() == 1);
}

TEST_CASE("a tie goes to the variant of the first shard") {
  auto b = base();
  b[1].definition = "integer NOT NULL";
  auto out = compare({snap("a", base()), snap("b", b)}, std::nullopt);
  CHECK(out[0].differences.empty());
  REQUIRE(out[1].differences.size() == 1);
  CHECK(out[1].differences[0].expected == "bigint NOT NULL");
}

TEST_CASE("a table missing on one shard is one difference, not one per column and index") {
  std::vector<Object> none;
  auto out = compare({snap("a", base()), snap("b", base()), snap("c", none)}, std::nullopt);
  REQUIRE(out[2].differences.size() == 1);
  CHECK(out[2].differences[0].key == "table:public.orders");
  CHECK(out[2].differences[0].change == Change::missing);
  // And extra the other way round.
  auto out2 = compare({snap("a", none), snap("b", none), snap("c", base())}, std::nullopt);
  REQUIRE(out2[2].differences.size() == 1);
  CHECK(out2[2].differences[0].change == Change::extra);
}

TEST_CASE("--ignore globs match the key or the name, and take an ignored table's children along") {
  Object tmp{"table:public.tmp_x", "", "table"};
  Object tmp_col{"column:public.tmp_x.a", "table:public.tmp_x", "int"};
  Object old_idx{"index:public.orders_old", "table:public.orders", "CREATE INDEX ..."};
  Object keep{"index:public.orders_new", "table:public.orders", "CREATE INDEX ..."};
  CHECK(ignored(tmp, {"public.tmp_*"}));
  CHECK(ignored(tmp_col, {"table:public.tmp_x"}));  // through its parent
  CHECK(ignored(old_idx, {"index:*_old"}));
  CHECK_FALSE(ignored(keep, {"index:*_old"}));
  CHECK_FALSE(ignored(tmp, {"index:*"}));
  CHECK_FALSE(ignored(tmp, {}));
  auto left = without_ignored({tmp, tmp_col, old_idx, keep}, {"public.tmp_*", "index:*_old"});
  REQUIRE(left.size() == 1);
  CHECK(left[0].key == "index:public.orders_new");
}

TEST_CASE("kind and name of a key") {
  CHECK(kind_of("column:public.orders.id") == "column");
  CHECK(name_of("column:public.orders.id") == "public.orders.id");
  CHECK(name_of("function:public.f(integer, text)") == "public.f(integer, text)");
}

TEST_CASE("each change has the word reports and JSON have always shown") {
  CHECK(to_text(Change::missing) == "missing");
  CHECK(to_text(Change::extra) == "extra");
  CHECK(to_text(Change::different) == "different");
}
