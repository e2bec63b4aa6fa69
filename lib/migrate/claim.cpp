#include "migrate/claim.hpp"

#include <optional>

namespace shardctl::migrate {
using routing::Key;
using routing::KeyRange;

namespace {

// Of two lower bounds the higher, of two upper bounds the lower (absent = unbounded).
std::optional<Key> max_low(const std::optional<Key>& a, const std::optional<Key>& b) {
  if (!a) return b;
  if (!b) return a;
  return routing::compare_keys(*a, *b) < 0 ? b : a;
}
std::optional<Key> min_high(const std::optional<Key>& a, const std::optional<Key>& b) {
  if (!a) return b;
  if (!b) return a;
  return routing::compare_keys(*a, *b) < 0 ? a : b;
}

// The lower of two lower bounds and the higher of two upper bounds (absent = unbounded).
std::optional<Key> lower_low(const std::optional<Key>& a, const std::optional<Key>& b) {
  if (!a || !b) return std::nullopt;
  return routing::compare_keys(*a, *b) < 0 ? a : b;
}
std::optional<Key> higher_high(const std::optional<Key>& a, const std::optional<Key>& b) {
  if (!a || !b) return std::nullopt;
  return routing::compare_keys(*a, *b) < 0 ? b : a;
}

}  // namespace

KeyRange split_side(const KeyRange& holder, const Key& at, bool move_upper) {
  return move_upper ? KeyRange{at, holder.high} : KeyRange{holder.low, at};
}

KeyRange part_within(const KeyRange& range, const KeyRange& within) {
  return KeyRange{max_low(range.low, within.low), min_high(range.high, within.high)};
}

KeyRange span_of(const KeyRange& a, const KeyRange& b) { return KeyRange{lower_low(a.low, b.low), higher_high(a.high, b.high)}; }

}  // namespace shardctl::migrate
