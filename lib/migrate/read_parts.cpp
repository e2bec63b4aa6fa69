#include "migrate/read_parts.hpp"

#include <algorithm>

#include "routing/range_split.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

namespace {

bool integer_keys(routing::KeyType type) { return type == routing::KeyType::int4 || type == routing::KeyType::int8; }

}  // namespace

int read_parts(int parallel, std::int64_t rows, bool binary, routing::MapKind kind) noexcept {
  int want = static_cast<int>(std::min<std::int64_t>(2 * parallel, rows / rows_per_read_part));
  return parallel > 1 && binary && kind != routing::MapKind::hash && want > 1 ? want : 1;
}

bool cut_needs_held_keys(routing::KeyType bound_type, const KeyRange& range) noexcept {
  return integer_keys(bound_type) && (!range.low || !range.high);
}

std::vector<KeyRange> cut_for_reads(routing::KeyType bound_type, const KeyRange& range, int parts,
                                    const std::optional<std::pair<routing::Key, routing::Key>>& held) {
  if (!integer_keys(bound_type)) return {range};
  KeyRange span = range;
  if (!range.low || !range.high) {
    if (!held) return {range};
    if (!span.low) span.low = held->first;
    if (!span.high) span.high = routing::key_successor(bound_type, held->second);
    if (!span.high) return {range};
  }
  auto out = routing::split_key_range(bound_type, span, parts);
  out.front().low = range.low;
  out.back().high = range.high;
  return out;
}

}  // namespace shardctl::migrate
