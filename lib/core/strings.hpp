// Small string helpers that several capability folders need (one definition, so a unity
// build of a folder never sees two).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl {

// The parts with `sep` between them ("a, b, c").
inline std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The text of the double-quoted token that starts at text[at] (a '"'), a doubled quote read as
// one quote (SQL identifiers, CSV fields), with `at` moved past its closing quote; none when it
// never closes (`at` is then text.size()).
inline std::optional<std::string> read_double_quoted(std::string_view text, std::size_t& at) {
  std::string out;
  for (++at; at < text.size(); ++at) {
    if (text[at] != '"') {
      out += text[at];
    } else if (at + 1 < text.size() && text[at + 1] == '"') {
      out += '"';
      ++at;
    } else {
      ++at;
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace shardctl
