// An enum's words, written once as a table. shardctl's states (a shard's status, a batch's
// step, an operation's kind...) are enums in code and words at the boundary: the catalog's
// columns and CHECKs, JSON, text output (ARCHITECTURE.md, "Typed states"). Each enum has one
// table of its words; to_text, reading a word back and listing every value all come from it,
// so the words cannot drift apart between a switch and a loop written beside it, and a test can
// walk every value (tests/integration/itest_catalog_state_words.cpp does, against the CHECKs).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace shardctl {

template <typename Enum, std::size_t N>
class Words {
 public:
  using Entry = std::pair<Enum, std::string_view>;

  constexpr explicit Words(std::array<Entry, N> table) : table_(table) {}

  // The value's word; empty for a value the table lacks (a bug the unit tests catch).
  constexpr std::string_view text(Enum value) const noexcept { return text_or(value, {}); }

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

  constexpr const std::array<Entry, N>& entries() const noexcept { return table_; }

  // Every value, in the table's order.
  constexpr std::array<Enum, N> values() const noexcept {
    std::array<Enum, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = table_[i].first;
    return out;
  }

 private:
  std::array<Entry, N> table_;
};

// words<E>({{E::a, "a"}, {E::b, "b"}}): the table, its size deduced.
template <typename Enum, std::size_t N>
constexpr Words<Enum, N> words(const std::pair<Enum, std::string_view> (&table)[N]) {
  std::array<std::pair<Enum, std::string_view>, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = table[i];
  return Words<Enum, N>(a);
}

}  // namespace shardctl
