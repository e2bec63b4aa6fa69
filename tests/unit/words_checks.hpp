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
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "core/words.hpp"

namespace shardctl::test {

// from_text<E>, read_word<E> and parse_word<E> (core/words.hpp) as functions of the word alone,
// to hand to the checks below.
template <class Enum>
inline constexpr auto find_as = [](std::string_view word) { return from_text<Enum>(word); };
template <class Enum>
inline constexpr auto read_as = [](std::string_view word) { return read_word<Enum>(word); };
template <class Enum>
inline constexpr auto parse_as = [](std::string_view word) { return parse_word<Enum>(word); };

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

// An enum that is only printed, never read back (JSON, JUnit and text output): to_text gives
// each expected word, `out << value` prints it, and no two values share a word.
template <class Enum>
void check_printed_words(std::initializer_list<std::pair<Enum, const char*>> expected) {
  std::set<std::string> seen;
  for (const auto& [value, word] : expected) {
    INFO("the word '" << std::string(word) << "'");
    CHECK(to_text(value) == std::string_view(word));
    CHECK(seen.insert(std::string(word)).second);
  }
  check_streamed(expected);
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

// An enum a catalog or shard column stores (its core/words.hpp table, and from_text, the
// reader of the column): the table holds exactly `expected`, each word both ways; to_text
// gives each word and from_text reads it back as its value; and, where the enum has an
// operator<< (`op list`, logs), it prints the word.
template <class Enum, std::size_t N, class FromText, class Expected>
void check_column_words(const Words<Enum, N>& table, FromText from_text, const Expected& expected) {
  check_table(table, expected);
  check_words(expected, from_text);
  if constexpr (requires(std::ostream& out, Enum value) { out << value; }) check_streamed(expected);
}

// The same, with the expected words written in the call.
template <class Enum, std::size_t N, class FromText>
void check_column_words(const Words<Enum, N>& table, FromText from_text,
                        std::initializer_list<std::pair<Enum, const char*>> expected) {
  check_column_words<Enum, N, FromText, decltype(expected)>(table, from_text, expected);
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
