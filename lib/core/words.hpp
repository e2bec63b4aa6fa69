// An enum's words, written once as a table. shardctl's states (a shard's status, a batch's
// step, an operation's kind...) are enums in code and words at the boundary: the catalog's
// columns and CHECKs, JSON, text output (ARCHITECTURE.md, "Typed states"). Each enum has one
// table of its words; to_text, reading a word back and listing every value all come from it,
// so the words cannot drift apart between a switch and a loop written beside it, and a test can
// walk every value (tests/integration/itest_catalog_state_words.cpp does, against the CHECKs).
//
// An enum's namespace names its table for the generic functions below with a `words_of`
// overload, found by argument-dependent lookup, and brings them in by using-declarations, so
// that `to_text(value)` and `out << value` find them from any namespace:
//
//   enum class Colour { red, green };
//   inline constexpr auto colour_words = words<Colour>({{Colour::red, "red"}, {Colour::green, "green"}});
//   constexpr const auto& words_of(Colour) noexcept { return colour_words; }
//   using shardctl::to_text;
//   using shardctl::operator<<;
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.hpp"

namespace shardctl {

template <typename Enum, std::size_t N>
class Words {
 public:
  using Entry = std::pair<Enum, std::string_view>;

  constexpr explicit Words(std::array<Entry, N> table) : table_(table) {}

  // The same table, giving `word` for a value it lacks: for an enum whose text has always been a
  // default word rather than nothing (e.g. "pending" for a value out of range).
  constexpr Words otherwise(std::string_view word) const noexcept {
    Words out = *this;
    out.fallback_ = word;
    return out;
  }

  // The same table, calling a word it lacks an unknown WHAT: see parse.
  constexpr Words named(std::string_view what) const noexcept {
    Words out = *this;
    out.what_ = what;
    return out;
  }

  // The same table, reading a stored word as WHAT in WHERE (a catalog or shard column): see read.
  constexpr Words stored_as(std::string_view what, std::string_view where) const noexcept {
    Words out = named(what);
    out.where_ = where;
    return out;
  }

  // The value's word; for a value the table lacks (a bug the unit tests catch), the word given
  // to otherwise(), else empty.
  constexpr std::string_view text(Enum value) const noexcept { return text_or(value, fallback_); }

  // The value's word, or `fallback` for a value the table lacks: for a to_text that has always
  // printed a default word rather than nothing.
  constexpr std::string_view text_or(Enum value, std::string_view fallback) const noexcept {
    for (const auto& [v, w] : table_)
      if (v == value) return w;
    return fallback;
  }

  constexpr std::optional<Enum> find(std::string_view word) const noexcept {
    for (const auto& [v, w] : table_)
      if (w == word) return v;
    return std::nullopt;
  }

  // The value a stored word names (a catalog or shard column): an unknown word is an internal
  // Error (70), "unknown WHAT 'word' in WHERE", since shardctl wrote it or the CHECK allowed it.
  Enum read(std::string_view word, std::string_view what, std::string_view where) const {
    if (auto v = find(word)) return *v;
    throw internal_error("unknown " + std::string(what) + " '" + std::string(word) + "' in " + std::string(where));
  }

  // The same, naming what and where the table was given by stored_as().
  Enum read(std::string_view word) const { return read(word, what_, where_); }

  // The value an operator's word names (a command-line option): an unknown word is a usage
  // Error (64), "unknown WHAT 'word'", whose hint lists the words: "use a, b or c".
  Enum parse(std::string_view word, std::string_view what) const {
    if (auto v = find(word)) return *v;
    std::string hint = "use ";
    for (std::size_t i = 0; i < N; ++i)
      hint.append(i == 0 ? "" : i + 1 == N ? " or " : ", ").append(table_[i].second);
    throw usage_error("unknown " + std::string(what) + " '" + std::string(word) + "'", hint);
  }

  // The same, naming what the table was given by named() or stored_as().
  Enum parse(std::string_view word) const { return parse(word, what_); }

  constexpr const std::array<Entry, N>& entries() const noexcept { return table_; }

  // Every value, in the table's order.
  constexpr std::array<Enum, N> values() const noexcept {
    std::array<Enum, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = table_[i].first;
    return out;
  }

 private:
  std::array<Entry, N> table_;
  std::string_view fallback_;
  std::string_view what_ = "word";
  std::string_view where_ = "shardctl";
};

// words<E>({{E::a, "a"}, {E::b, "b"}}): the table, its size deduced.
template <typename Enum, std::size_t N>
constexpr Words<Enum, N> words(const std::pair<Enum, std::string_view> (&table)[N]) {
  std::array<std::pair<Enum, std::string_view>, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = table[i];
  return Words<Enum, N>(a);
}

// An enum with a table: its namespace declares `words_of(Enum)`, returning the table.
template <typename Enum>
concept has_words = std::is_enum_v<Enum> && requires(Enum value) {
  { words_of(value).text(value) } -> std::same_as<std::string_view>;
};

// The value's word (the table's fallback, else empty, for a value it lacks).
template <has_words Enum>
constexpr std::string_view to_text(Enum value) noexcept {
  return words_of(value).text(value);
}

// The value a word names, or nothing: the caller says what was wrong and where.
template <has_words Enum>
constexpr std::optional<Enum> from_text(std::string_view word) noexcept {
  return words_of(Enum{}).find(word);
}

// (read_word and parse_word, not read and parse: a template of those names in namespace shardctl
// would hide POSIX read(2) from every unqualified call in it.)
//
// The value a stored word names; an unknown word is an internal Error (70), "unknown WHAT 'word'
// in WHERE", with WHAT and WHERE given here or, without them, by the table's stored_as().
template <has_words Enum>
Enum read_word(std::string_view word, std::string_view what, std::string_view where) {
  return words_of(Enum{}).read(word, what, where);
}
template <has_words Enum>
Enum read_word(std::string_view word) {
  return words_of(Enum{}).read(word);
}

// The value an operator's word names: an unknown word is a usage Error (64) listing the words,
// "unknown WHAT 'word'", with WHAT given here or, without it, by the table's named().
template <has_words Enum>
Enum parse_word(std::string_view word, std::string_view what) {
  return words_of(Enum{}).parse(word, what);
}
template <has_words Enum>
Enum parse_word(std::string_view word) {
  return words_of(Enum{}).parse(word);
}

template <has_words Enum>
std::ostream& operator<<(std::ostream& out, Enum value) {
  return out << to_text(value);
}

}  // namespace shardctl
