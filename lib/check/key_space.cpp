#include "check/key_space.hpp"

#include <algorithm>
#include <limits>

namespace shardctl::check {
using routing::Key;
using routing::KeyRange;
using routing::KeyType;

namespace {

Key smallest(KeyType type) {
  switch (type) {
    case KeyType::int4: return std::int64_t{std::numeric_limits<std::int32_t>::min()};
    case KeyType::int8: return std::numeric_limits<std::int64_t>::min();
    case KeyType::text: return std::string();
    case KeyType::uuid: return routing::Uuid{};
  }
  return std::int64_t{0};
}

// Lower bounds: unbounded sorts first.
bool low_less(const KeyRange& a, const KeyRange& b) {
  if (!a.low) return b.low.has_value();
  if (!b.low) return false;
  return routing::compare_keys(*a.low, *b.low) < 0;
}

}  // namespace

std::vector<KeyRange> unmapped_ranges(KeyType bound_type, std::vector<KeyRange> ranges) {
  const Key min = smallest(bound_type);
  for (auto& r : ranges)
    if (r.low && routing::compare_keys(*r.low, min) <= 0) r.low.reset();
  std::sort(ranges.begin(), ranges.end(), low_less);

  std::vector<KeyRange> gaps;
  // `covered` is the upper end of the space covered so far: nullopt with `started` false is
  // "nothing yet" (minus infinity), nullopt with `started` true is "everything" (infinity).
  std::optional<Key> covered;
  bool started = false;
  for (const auto& r : ranges) {
    if (started && !covered) break;  // already covered to infinity
    if (!started) {
      if (r.low) gaps.push_back(KeyRange{std::nullopt, r.low});
    } else if (r.low && routing::compare_keys(*r.low, *covered) > 0) {
      gaps.push_back(KeyRange{covered, r.low});
    }
    if (!started || !r.high || routing::compare_keys(*r.high, *covered) > 0) covered = r.high;
    started = true;
  }
  if (!started) gaps.push_back(KeyRange{});
  else if (covered) gaps.push_back(KeyRange{covered, std::nullopt});
  return gaps;
}

std::vector<std::pair<std::size_t, std::size_t>> overlapping_pairs(const std::vector<KeyRange>& ranges) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < ranges.size(); ++i)
    for (std::size_t j = i + 1; j < ranges.size(); ++j)
      if (routing::ranges_overlap(ranges[i], ranges[j])) out.emplace_back(i, j);
  return out;
}

}  // namespace shardctl::check
