#include "check/predicates.hpp"

#include "check/fleet.hpp"
#include "shardio/key_filter.hpp"

namespace shardctl::check {
using routing::KeyType;

std::string mapped_predicate(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                             const std::function<bool(const catalog::Mapping&)>& which) {
  auto space = space_of(map);
  // Many ranges of integer keys or hash values: one int8multirange, whose containment test is
  // a binary search (log n per row, not n comparisons). Few ranges: plain comparisons, far
  // cheaper per row (bench/check.sh: 1.2-1.9 s with comparisons, 4.1 s with a multirange of
  // one range).
  constexpr std::size_t multirange_from = 32;
  std::size_t range_count = 0;
  for (const auto& m : map.mappings) range_count += !m.is_point && which(m);
  bool integral = (map.map.kind == routing::MapKind::hash || map.map.key_type == KeyType::int4 ||
                   map.map.key_type == KeyType::int8) &&
                  range_count >= multirange_from;
  std::string points, ranges, multirange;
  for (const auto& m : map.mappings) {
    if (!which(m)) continue;
    if (m.is_point) {
      points += (points.empty() ? "" : ", ") + shardio::key_literal(conn, shardio::RouteSpace{routing::MapKind::list, map.map.key_type}, *m.range.low);
    } else if (integral) {
      multirange += multirange.empty() ? '{' : ',';
      if (m.range.low) {
        multirange += '[';
        multirange += routing::format_key(*m.range.low);
      } else {
        multirange += '(';
      }
      multirange += ',';
      if (m.range.high) multirange += routing::format_key(*m.range.high);
      multirange += ')';
    } else {
      ranges += (ranges.empty() ? "(" : " OR (") + shardio::key_filter(conn, space, quoted_column, m.range) + ")";
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
