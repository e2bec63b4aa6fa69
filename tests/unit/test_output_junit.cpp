#include <doctest/doctest.h>

#include "output/junit.hpp"

using namespace shardctl::output;

TEST_CASE("junit_xml counts failures and skips, escapes text, and gives each case its time") {
  std::vector<JunitCase> cases{{"shardctl.schema.apply.shard_1", "V1__init.sql", 0.25, std::nullopt, "", false},
                               {"shardctl.schema.apply.shard_2", "V1__init.sql", 1.5, std::string("relation \"t\" <exists> & more"),
                                "ERROR:  relation \"t\" already exists", false},
                               {"shardctl.schema.apply.shard_3", "V1__init.sql", 0, std::nullopt, "", true}};
  auto x = junit_xml("schema apply", cases);
  CHECK(x.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"1.750\"") != std::string::npos);
  CHECK(x.find("<testcase classname=\"shardctl.schema.apply.shard_1\" name=\"V1__init.sql\" time=\"0.250\"/>") !=
        std::string::npos);
  CHECK(x.find("message=\"relation &quot;t&quot; &lt;exists&gt; &amp; more\"") != std::string::npos);
  CHECK(x.find("<skipped/>") != std::string::npos);
}

TEST_CASE("junit_xml replaces control characters XML cannot hold") {
  auto x = junit_xml("s", {{"c", std::string("a\x01") + "b", 0, std::nullopt, "", false}});
  CHECK(x.find("name=\"a?b\"") != std::string::npos);
}
