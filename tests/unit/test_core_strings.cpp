// core/strings.hpp: a double-quoted token read as SQL identifiers and CSV fields quote, "" for
// one quote, with the position after it; an unclosed one is none.
#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <string>

#include "core/strings.hpp"

TEST_CASE("a double-quoted token reads up to its closing quote, a doubled quote as one") {
  std::size_t at = 2;
  CHECK(shardctl::read_double_quoted(R"(x."we""ird".y)", at) == std::optional<std::string>("we\"ird"));
  CHECK(at == 11);
  at = 0;
  CHECK(shardctl::read_double_quoted(R"("",1)", at) == std::optional<std::string>(""));
  CHECK(at == 2);
  at = 0;
  CHECK(shardctl::read_double_quoted(R"("""",1)", at) == std::optional<std::string>("\""));
  CHECK(at == 4);
}

TEST_CASE("a double-quoted token that never closes is none") {
  for (const char* text : {"\"abc", "\"a\"\"", "\""}) {
    INFO(text);
    std::size_t at = 0;
    CHECK_FALSE(shardctl::read_double_quoted(text, at));
    CHECK(at == std::string(text).size());
  }
}
