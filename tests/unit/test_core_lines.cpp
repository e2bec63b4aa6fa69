// core/lines.hpp: a stream's chunks read as whole lines, wherever the chunks cut them.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/lines.hpp"

namespace {

std::vector<std::string> lines_of(const std::vector<std::string_view>& chunks, std::string& partial) {
  std::vector<std::string> out;
  for (auto chunk : chunks) shardctl::for_each_line(chunk, partial, [&](std::string_view l) { out.emplace_back(l); });
  return out;
}

}  // namespace

TEST_CASE("each line is handed over once and whole, with its newline, however the chunks cut it") {
  std::string partial;
  CHECK(lines_of({"a\tb\nc", "d\n", "", "e", "f", "\ng\n"}, partial) == std::vector<std::string>{"a\tb\n", "cd\n", "ef\n", "g\n"});
  CHECK(partial.empty());
}

TEST_CASE("a line the stream never ends is left in partial") {
  std::string partial;
  CHECK(lines_of({"x\ny", "z"}, partial) == std::vector<std::string>{"x\n"});
  CHECK(partial == "yz");
}
