// The query result writers without a database: CSV quoting, JSON values by type, the text
// table aligned over the rows it holds back, and JSON that parses.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "query/render.hpp"

using namespace shardctl::query;

namespace {

Summary summary_of(std::vector<std::pair<std::string, shardctl::fanout::State>> shards) {
  Summary s;
  for (auto& [name, state] : shards) {
    ShardResult r;
    r.outcome.shard = name;
    r.outcome.state = state;
    if (state != shardctl::fanout::State::ok) r.outcome.error = "boom";
    s.shards.push_back(r);
  }
  return s;
}

}  // namespace

TEST_CASE("CSV fields: NULL empty, empty string quoted, specials quoted and doubled") {
  CHECK(csv_field(std::nullopt) == "");
  CHECK(csv_field(std::string_view("")) == "\"\"");
  CHECK(csv_field(std::string_view("plain")) == "plain");
  CHECK(csv_field(std::string_view("a,b")) == "\"a,b\"");
  CHECK(csv_field(std::string_view("say \"hi\"")) == "\"say \"\"hi\"\"\"");
  CHECK(csv_field(std::string_view("two\nlines")) == "\"two\nlines\"");
  CHECK(csv_field(std::string_view(" pad")) == "\" pad\"");
}

TEST_CASE("JSON values follow the column type") {
  CHECK(json_value(std::nullopt, 23) == "null");
  CHECK(json_value(std::string_view("42"), 23) == "42");
  CHECK(json_value(std::string_view("-1.5e+10"), 701) == "-1.5e+10");
  CHECK(json_value(std::string_view("NaN"), 1700) == "\"NaN\"");
  CHECK(json_value(std::string_view("Infinity"), 701) == "\"Infinity\"");
  CHECK(json_value(std::string_view("t"), 16) == "true");
  CHECK(json_value(std::string_view("f"), 16) == "false");
  CHECK(json_value(std::string_view("{\"a\": 1}"), 3802) == "{\"a\": 1}");
  CHECK(json_value(std::string_view("he said \"x\"\n"), 25) == "\"he said \\\"x\\\"\\n\"");
  CHECK(json_value(std::string_view("12"), 25) == "\"12\"");  // text stays a string
}

TEST_CASE("the JSON writer streams one document that parses, with rows, shards and partial") {
  std::ostringstream out;
  auto sink = json_sink(out);
  sink->begin({{"n", "integer", 23}, {"name", "text", 25}});
  std::vector<Cell> r1{std::string_view("1"), std::string_view("x")};
  std::vector<Cell> r2{std::nullopt, std::string_view("y")};
  sink->row("s1", r1);
  sink->row("s2", r2);
  sink->finish(summary_of({{"s1", shardctl::fanout::State::ok}, {"s2", shardctl::fanout::State::failed}}));
  auto doc = nlohmann::json::parse(out.str());
  CHECK(doc["columns"].size() == 3);
  CHECK(doc["columns"][0]["name"] == "shard");
  CHECK(doc["columns"][1]["type"] == "integer");
  REQUIRE(doc["rows"].size() == 2);
  CHECK(doc["rows"][0] == nlohmann::json::parse(R"(["s1", 1, "x"])"));
  CHECK(doc["rows"][1][1].is_null());
  CHECK(doc["shards"][1]["status"] == "failed");
  CHECK(doc["shards"][1]["error"] == "boom");
  CHECK(doc["partial"] == true);
}

TEST_CASE("the JSON writer makes a document even when no shard described its result") {
  std::ostringstream out;
  auto sink = json_sink(out);
  sink->finish(summary_of({{"s1", shardctl::fanout::State::unreachable}}));
  auto doc = nlohmann::json::parse(out.str());
  CHECK(doc["rows"].empty());
  CHECK(doc["columns"].size() == 1);
  CHECK(doc["shards"][0]["status"] == "unreachable");
}

TEST_CASE("the text table aligns the rows it holds back, then streams at those widths") {
  std::ostringstream out;
  auto sink = text_sink(out, 2);
  sink->begin({{"n", "integer", 23}});
  std::vector<Cell> a{std::string_view("1")}, b{std::string_view("22")}, c{std::string_view("a\tb")};
  sink->row("shard_long", a);
  CHECK(out.str().empty());  // held back for the widths
  sink->row("s", b);
  sink->row("s", c);
  sink->finish(Summary{});
  CHECK(out.str() == "shard       n\nshard_long  1\ns           22\ns           a\\tb\n");
}
