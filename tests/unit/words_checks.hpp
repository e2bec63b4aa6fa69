// The checks every unit test about an enum's words makes (core/words.hpp), written once. A test
// writes out the words it expects, as the contract spells them (catalog columns, JSON, text),
// in a list of {value, "word"} pairs, and hands it to these together with the table or the
// functions under test. (unit_tests compiles its files in unity batches: these are templates
// and inline functions, so every file can include them.)
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace shardctl::test {

// Each expected value has its word both ways: to_text(value) is the word and from_text(word)
// reads it back as the value (from_text may return the value or an optional of it); no two
// values share a word.
template <class Expected, class ToText, class FromText>
void check_words(const Expected& expected, ToText to_text, FromText from_text) {
  std::set<std::string> seen;
  for (const auto& [value, word] : expected) {
    INFO("the word '" << std::string(word) << "'");
    CHECK(to_text(value) == std::string_view(word));
    CHECK(from_text(word) == value);
    CHECK(seen.insert(std::string(word)).second);
  }
}

// The same, with the to_text of the enum's own namespace.
template <class Expected, class FromText>
void check_words(const Expected& expected, FromText from_text) {
  check_words(expected, [](auto value) { return to_text(value); }, from_text);
}

// `out << value` prints the value's expected word.
template <class Expected>
void check_streamed(const Expected& expected) {
  for (const auto& [value, word] : expected) {
    INFO("the word '" << std::string(word) << "'");
    std::ostringstream out;
    out << value;
    CHECK(out.str() == std::string_view(word));
  }
}

// A table (core/words.hpp) is one-to-one: no two values share a word or a value two words, and
// each word reads back as its value. No word is empty: text() says "no word" with an empty one.
template <class Table>
void check_one_to_one(const Table& table) {
  std::set<std::string_view> seen;
  for (const auto& [value, word] : table.entries()) {
    INFO("the word '" << std::string(word) << "'");
    CHECK_FALSE(word.empty());
    CHECK(seen.insert(word).second);
    CHECK(table.text(value) == word);
    CHECK(table.find(word) == value);
  }
}

// A table holds exactly the expected words, each both ways, and no other.
template <class Table, class Expected>
void check_table(const Table& table, const Expected& expected) {
  check_one_to_one(table);
  check_words(
      expected, [&](auto value) { return table.text(value); }, [&](std::string_view word) { return table.find(word); });
  CHECK(table.entries().size() == std::size(expected));
}

// `message` with its "{}" replaced by `word`.
inline std::string with_word(std::string_view message, std::string_view word) {
  std::string out(message);
  if (auto at = out.find("{}"); at != std::string::npos) out.replace(at, 2, word);
  return out;
}

// Each of `unknown` makes `read` throw an Error of `kind` whose message is `message` with "{}"
// replaced by the word, and whose hint, when `hint` is given, is that.
template <class Read>
void check_refused_words(Read read, std::initializer_list<std::string_view> unknown, ErrorKind kind,
                         std::string_view message, std::optional<std::string_view> hint = std::nullopt) {
  for (std::string_view word : unknown) {
    INFO("the word '" << std::string(word) << "'");
    try {
      read(std::string(word));
      FAIL("accepted '" << word << "'");
    } catch (const Error& e) {
      CHECK(e.kind() == kind);
      CHECK(std::string(e.what()) == with_word(message, word));
      if (hint) CHECK(e.hint() == *hint);
    }
  }
}

// A stored word no enum knows (a catalog or shard column): an internal Error (70) with
// `message`, "unknown WHAT '{}' in WHERE".
template <class Read>
void check_unknown_words(Read read, std::initializer_list<std::string_view> unknown, std::string_view message) {
  check_refused_words(read, unknown, ErrorKind::internal, message);
}

}  // namespace shardctl::test
