// Checks of JSON text before any parser sees it.
//
// Depth: nlohmann-json builds nested values recursively in places, and a copy or comparison of a
// parsed document recurses once per level: a plan file with one key nested 100,000 deep ran
// `rebalance apply` out of stack (SIGSEGV). No file shardctl reads nests more than a few levels,
// so anything deeper than max_input_nesting is refused (65) at the line and column where it
// went too deep. (The TOML config is measured the same way: config/toml_nesting.hpp.)
//
// Numbers: nlohmann-json cannot hold 1e400 and throws while parsing, without saying where. Here
// such a number is found first and named by its field ("plan.steps[0].rows").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace shardctl {

// Far above any file shardctl writes or reads (a plan nests 5 levels, a manifest 3, a config 4),
// far below what exhausts a thread's stack.
inline constexpr int max_input_nesting = 64;

struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;  // in characters (UTF-8 continuation bytes do not count)
};

// The line and column of byte `offset` of `text`.
inline TextPosition position_of(std::string_view text, std::size_t offset) {
  TextPosition p;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

inline std::string position_text(std::string_view text, std::size_t offset) {
  auto p = position_of(text, offset);
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

struct JsonTextProblem {
  enum class Kind { too_deep, number_out_of_range };
  Kind kind = Kind::too_deep;
  std::size_t offset = 0;  // of the bracket or the number
  std::string field;       // where it is: "plan.steps[0].rows"; empty at the top
  std::string number;      // the number's text (number_out_of_range)
};

// The first place where `text` nests deeper than `max_depth` or holds a number no double can
// hold, or nullopt. Malformed JSON is the parser's to report: this only follows brackets, keys
// and numbers, and never looks inside strings.
inline std::optional<JsonTextProblem> json_text_problem(std::string_view text, int max_depth) {
  struct Frame {
    bool object = false;
    bool expect_key = true;  // object: the next string is a key
    std::string key;         // object: the last key
    std::size_t index = 0;   // array: the element's index
  };
  std::vector<Frame> frames;
  auto field = [&] {
    std::string out;
    for (const auto& f : frames) {
      if (f.object) out += (out.empty() ? "" : ".") + f.key;
      else {
        // Appended piece by piece: `"[" + std::to_string(...)` trips GCC 12's -Wrestrict at -O3.
        out += '[';
        out += std::to_string(f.index);
        out += ']';
      }
    }
    // Up to 64 levels of it: the start and the end tell where (cut between characters).
    if (out.size() <= 200) return out;
    auto cut = [&](std::size_t at) {
      while (at > 0 && at < out.size() && (static_cast<unsigned char>(out[at]) & 0xC0) == 0x80) --at;
      return at;
    };
    return out.substr(0, cut(100)) + "..." + out.substr(cut(out.size() - 97));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      std::size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (!frames.empty() && frames.back().object && frames.back().expect_key) {
        auto key = text.substr(start, std::min(i, text.size()) - start);
        frames.back().key = key.size() > 40 ? printable(key.substr(0, 40)) + "..." : printable(key);
        frames.back().expect_key = false;
      }
    } else if (c == '[' || c == '{') {
      if (static_cast<int>(frames.size()) >= max_depth) return JsonTextProblem{JsonTextProblem::Kind::too_deep, i, field(), {}};
      frames.emplace_back().object = c == '{';
    } else if (c == ']' || c == '}') {
      if (!frames.empty()) frames.pop_back();
    } else if (c == ',') {
      if (!frames.empty() && frames.back().object) frames.back().expect_key = true;
      else if (!frames.empty()) ++frames.back().index;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i;
      while (end < text.size() && (text[end] == '-' || text[end] == '+' || text[end] == '.' || text[end] == 'e' ||
                                   text[end] == 'E' || (text[end] >= '0' && text[end] <= '9')))
        ++end;
      // strtod as nlohmann-json reads numbers: infinity when no double can hold it (1e400), zero
      // or a denormal when it is merely tiny (1e-400, which the parser takes too).
      std::string number(text.substr(i, end - i));
      if (std::isinf(std::strtod(number.c_str(), nullptr)))
        return JsonTextProblem{JsonTextProblem::Kind::number_out_of_range, i, field(), number};
      i = end - 1;
    }
  }
  return std::nullopt;
}

// Refuses (65) JSON text from `origin` that nests deeper than max_input_nesting or holds a number
// out of range, naming file:line:col and the field.
inline void require_sound_json_text(std::string_view text, const std::string& origin, const std::string& hint = {}) {
  auto problem = json_text_problem(text, max_input_nesting);
  if (!problem) return;
  std::string where = origin + ":" + position_text(text, problem->offset) + ": ";
  if (problem->kind == JsonTextProblem::Kind::too_deep)
    throw data_error(where + (problem->field.empty() ? "" : problem->field + ": ") + "nested more than " +
                         std::to_string(max_input_nesting) + " levels deep (arrays and objects within each other)",
                     hint);
  throw data_error(where + (problem->field.empty() ? "" : problem->field + ": ") + "the number " +
                       printable(problem->number.size() > 40 ? problem->number.substr(0, 40) + "..." : problem->number) +
                       " is out of range",
                   hint);
}

}  // namespace shardctl
