// --load-file: key,weight CSV; a bad line is exit 65 naming file:line.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "stats/load_file.hpp"
#include "support.hpp"

using namespace shardctl;

namespace {
std::string load_file_error_of(const std::string& text) {
  return test::data_error_of([&] { stats::parse_load_csv(text, "load.csv"); });
}
}  // namespace

TEST_CASE("keys and weights, a header, comments, quotes and CRLF") {
  auto loads = stats::parse_load_csv("key,weight\r\n# from grafana\n42, 17.5\n\n\"a,\"\"b\",3\nx,0\n", "load.csv");
  REQUIRE(loads.size() == 3);
  CHECK(loads[0].key == "42");
  CHECK(loads[0].weight == doctest::Approx(17.5));
  CHECK(loads[0].line == 3);
  CHECK(loads[1].key == "a,\"b");
  CHECK(loads[1].weight == doctest::Approx(3));
  CHECK(loads[2].weight == 0);
}

TEST_CASE("bad lines name file:line") {
  CHECK(load_file_error_of("1,2\n2\n") == "load.csv:2: expected key,weight");
  CHECK(load_file_error_of("1,abc\n") == "load.csv:1: weight 'abc' is not a number >= 0");
  CHECK(load_file_error_of("1,-3\n") == "load.csv:1: weight '-3' is not a number >= 0");
  CHECK(load_file_error_of("1,2,3\n") == "load.csv:1: expected key,weight");
  CHECK(load_file_error_of("1,2\n1,3\n") == "load.csv:2: key '1' was already given on line 1");
  CHECK(load_file_error_of(",3\n") == "load.csv:1: empty key");
  CHECK(load_file_error_of("\"open,3\n") == "load.csv:1: expected key,weight");
}
