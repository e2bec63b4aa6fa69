// The pre-scan of JSON text (core/nesting.hpp): how deep it nests, numbers no double holds, and
// where (line, column, field). It runs before nlohmann-json sees a plan or manifest, so it must
// never refuse what a parser takes within the limits, and never miss what lies beyond them.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/nesting.hpp"
#include "support.hpp"

using namespace shardctl;

namespace {

std::string nesting_arrays(int depth) { return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']'); }

std::string nesting_refusal(const std::string& text) {
  return test::data_error_of([&] { require_sound_json_text(text, "f.json"); });
}

}  // namespace

TEST_CASE("JSON nesting up to the limit passes; one level more is refused where it starts") {
  CHECK_FALSE(json_text_problem(nesting_arrays(max_input_nesting), max_input_nesting));
  auto p = json_text_problem(nesting_arrays(max_input_nesting + 1), max_input_nesting);
  REQUIRE(p);
  CHECK(p->kind == JsonTextProblem::Kind::too_deep);
  CHECK(p->offset == static_cast<std::size_t>(max_input_nesting));
  // Objects count as arrays do, and a deep key deep down the file is placed by line and column.
  std::string deep = "{\n  \"plan\": {\"steps\": [\n    {\"x\": ";
  for (int i = 0; i < 100000; ++i) deep += "{\"a\": ";
  auto refusal = nesting_refusal(deep + "1");
  CHECK(refusal.find("f.json:3:") == 0);
  CHECK(refusal.find("nested more than 64 levels deep") != std::string::npos);
  CHECK(refusal.find("plan.steps[0].x.a.a") != std::string::npos);
}

TEST_CASE("the field of a refusal stays short: long keys and paths are cut") {
  std::string key(1000, 'k');
  std::string text;
  for (int i = 0; i < 70; ++i) text += "{\"" + key + "\": ";
  auto p = json_text_problem(text, max_input_nesting);
  REQUIRE(p);
  CHECK(p->field.size() <= 203);
  CHECK(p->field.rfind(std::string(40, 'k') + "...." + std::string(40, 'k'), 0) == 0);
}

TEST_CASE("brackets inside strings do not count, escaped quotes do not end a string") {
  std::string text = "{\"k\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  CHECK_FALSE(json_text_problem(text, 4));
  CHECK_FALSE(json_text_problem("[\"a\\\\\", [[1]]]", 3));  // the string ends after the escaped backslash
  CHECK(json_text_problem("[\"a\\\\\", [[[1]]]]", 3));
  // Unterminated strings and stray closers are the parser's to report: no crash, no refusal.
  CHECK_FALSE(json_text_problem("[\"abc", 1));
  CHECK_FALSE(json_text_problem("]]]]}}}[", 1));
  CHECK_FALSE(json_text_problem("", 1));
}

TEST_CASE("a number no double can hold is named by its field and place") {
  auto p = json_text_problem("{\"plan\": {\"steps\": [{}, {\"rows\": 1e400}]}}", max_input_nesting);
  REQUIRE(p);
  CHECK(p->kind == JsonTextProblem::Kind::number_out_of_range);
  CHECK(p->field == "plan.steps[1].rows");
  CHECK(p->number == "1e400");
  CHECK(nesting_refusal("{\"a\": [1,\n -1E+400]}") == "f.json:2:2: a[1]: the number -1E+400 is out of range");
  CHECK(nesting_refusal(std::string(400, '9')).find("f.json:1:1: the number 9999") == 0);
  // What nlohmann-json takes stays: tiny numbers (0), integers past 64 bits (a double), keys and
  // strings that look like numbers.
  for (const char* fine : {"[1e-400]", "[123456789012345678901234567890]", "{\"1e400\": \"1e400\"}", "[-0.5e10, 0, 1.7976931348623157e308]"})
    CHECK_MESSAGE(!json_text_problem(fine, max_input_nesting), fine);
}

TEST_CASE("positions count lines and characters, not bytes") {
  auto p = position_of("ab\n\xc3\xa9\xc3\xa9x", 7);
  CHECK(p.line == 2);
  CHECK(p.column == 3);
  CHECK(position_text("abc", 0) == "1:1");
}
