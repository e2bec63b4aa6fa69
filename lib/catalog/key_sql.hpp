// How keys and ranges of a map are written to and read from the catalog's range columns.
#pragma once

#include <optional>
#include <string>

#include "routing/key.hpp"

namespace shardctl::catalog {

// The mappings column a map of this kind and key type keeps its key space in.
std::string range_column(routing::MapKind kind, routing::KeyType key_type);
// The range constructor for that column ("int8range", "shardctl.textrange", ...).
std::string range_constructor(routing::MapKind kind, routing::KeyType key_type);
// The key type the mapping bounds are parsed as: the key type, or bigint for hash values.
routing::KeyType bound_type(routing::MapKind kind, routing::KeyType key_type);

// Bound parameters for a range: canonical text, or nullopt for an unbounded side.
struct RangeParams {
  std::optional<std::string> low;
  std::optional<std::string> high;
  std::string bounds;  // "[)" for ranges, "[]" for points
};
RangeParams range_params(const routing::KeyRange& range);
RangeParams point_params(routing::KeyType type, const routing::Key& point);
// An operation's claim or batch as the catalog stores it: a list map's `point` as points are
// stored, [k,k] (point_params); without one, `range` as [low, high).
RangeParams claim_params(routing::KeyType bound_type, const std::optional<routing::Key>& point,
                         const routing::KeyRange& range);
// The other way: the keys of a claim or batch of a map as code ranges hold them, a list map's
// point (stored [k,k]) as the half-open [k, successor); any other range as it is.
routing::KeyRange claimed_keys(routing::MapKind kind, routing::KeyType key_type, const routing::KeyRange& stored);

}  // namespace shardctl::catalog
