#include "check/predicates.hpp"

#include <algorithm>
#include <vector>

#include "check/fleet.hpp"
#include "shardio/key_filter.hpp"

namespace shardctl::check {
using routing::KeyType;

namespace {

// The ranges as few as they can be: sorted, and those that touch or overlap joined. Every
// mapping of a map that covers its key space without gaps makes one range: a predicate over
// "any shard's keys" then costs one comparison however many shards the map has, not a text
// (and a parse on every shard's server) as long as the fleet.
std::vector<routing::KeyRange> joined_ranges(std::vector<routing::KeyRange> ranges) {
  // Unbounded below first, then by lower bound (a map's mappings mostly come in that order).
  auto before = [](const routing::KeyRange& a, const routing::KeyRange& b) {
    if (!a.low || !b.low) return !a.low && b.low;
    return routing::compare_keys(*a.low, *b.low) < 0;
  };
  if (!std::is_sorted(ranges.begin(), ranges.end(), before)) std::sort(ranges.begin(), ranges.end(), before);
  std::vector<routing::KeyRange> out;
  for (auto& r : ranges) {
    if (!out.empty()) {
      auto& last = out.back();
      // Touching or overlapping: [a, b) then [c, d) with c <= b (or b unbounded).
      bool meets = !last.high || (r.low && routing::compare_keys(*r.low, *last.high) <= 0) || !r.low;
      if (meets) {
        if (last.high && (!r.high || routing::compare_keys(*r.high, *last.high) > 0)) last.high = r.high;
        continue;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string mapped_predicate(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                             const std::function<bool(const catalog::Mapping&)>& which) {
  auto space = space_of(map);
  std::vector<routing::KeyRange> selected;
  std::string points;
  for (const auto& m : map.mappings) {
    if (!which(m)) continue;
    if (m.is_point)
      points += (points.empty() ? "" : ", ") +
                shardio::key_literal(conn, shardio::RouteSpace{routing::MapKind::list, map.map.key_type}, *m.range.low);
    else
      selected.push_back(m.range);
  }
  auto joined = joined_ranges(std::move(selected));
  // Many ranges of integer keys or hash values: one int8multirange, whose containment test is
  // a binary search (log n per row, not n comparisons). Few ranges: plain comparisons, far
  // cheaper per row (bench/check.sh: 1.2-1.9 s with comparisons, 4.1 s with a multirange of
  // one range).
  constexpr std::size_t multirange_from = 32;
  bool integral = (map.map.kind == routing::MapKind::hash || map.map.key_type == KeyType::int4 ||
                   map.map.key_type == KeyType::int8) &&
                  joined.size() >= multirange_from;
  std::string ranges, multirange;
  for (const auto& range : joined) {
    if (integral) {
      multirange += multirange.empty() ? '{' : ',';
      if (range.low) {
        multirange += '[';
        multirange += routing::format_key(*range.low);
      } else {
        multirange += '(';
      }
      multirange += ',';
      if (range.high) multirange += routing::format_key(*range.high);
      multirange += ')';
    } else {
      ranges += (ranges.empty() ? "(" : " OR (") + shardio::key_filter(conn, space, quoted_column, range) + ")";
    }
  }
  if (!multirange.empty())
    ranges = conn.literal(multirange + "}") + "::int8multirange @> (" + shardio::route_expression(space, quoted_column) +
             ")::bigint";
  std::string out = ranges;
  if (!points.empty())
    out += (out.empty() ? "" : " OR ") + shardio::route_expression(space, quoted_column) + " IN (" + points + ")";
  return out.empty() ? "false" : "(" + out + ")";
}

std::string routed_to(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                      const std::string& shard) {
  return mapped_predicate(conn, map, quoted_column, [&](const catalog::Mapping& m) { return m.shard == shard; });
}

std::string in_ranges(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                      const std::vector<routing::KeyRange>& ranges) {
  std::string out;
  for (const auto& r : ranges)
    out += (out.empty() ? "(" : " OR (") + shardio::key_filter(conn, space_of(map), quoted_column, r) + ")";
  return out.empty() ? "false" : "(" + out + ")";
}

std::string stray_predicate(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                            const std::string& shard, const std::vector<routing::KeyRange>& in_flight) {
  std::string here = mapped_predicate(conn, map, quoted_column, [&](const catalog::Mapping& m) {
    return m.shard == shard || m.status != catalog::MappingStatus::online;
  });
  return "(" + quoted_column + " IS NOT NULL AND NOT " + here + " AND NOT " +
         in_ranges(conn, map, quoted_column, in_flight) + ")";
}

}  // namespace shardctl::check
