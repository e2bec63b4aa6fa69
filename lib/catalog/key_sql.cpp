#include "catalog/key_sql.hpp"

#include <cstdint>
#include <limits>

namespace shardctl::catalog {
using routing::KeyType;
using routing::MapKind;

routing::KeyType bound_type(MapKind kind, KeyType key_type) {
  return kind == MapKind::hash ? KeyType::int8 : key_type;
}

namespace {

// A bound type's range column in the catalog, and the constructor of its values: one row each.
struct RangeSql {
  const char* column;
  const char* constructor;
};

RangeSql range_sql(MapKind kind, KeyType key_type) {
  switch (bound_type(kind, key_type)) {
    case KeyType::int4:
    case KeyType::int8: return {"int_range", "int8range"};
    case KeyType::text: return {"text_range", "shardctl.textrange"};
    case KeyType::uuid: return {"uuid_range", "shardctl.uuidrange"};
  }
  return {"int_range", "int8range"};
}

}  // namespace

std::string range_column(MapKind kind, KeyType key_type) { return range_sql(kind, key_type).column; }

std::string range_constructor(MapKind kind, KeyType key_type) { return range_sql(kind, key_type).constructor; }

RangeParams range_params(const routing::KeyRange& range) {
  RangeParams p;
  if (range.low) p.low = routing::format_key(*range.low);
  if (range.high) p.high = routing::format_key(*range.high);
  p.bounds = "[)";
  return p;
}

RangeParams point_params(KeyType type, const routing::Key& point) {
  RangeParams p;
  p.low = routing::format_key(point);
  p.bounds = "[]";
  p.high = p.low;
  // int8range canonicalizes [k,k] to [k,k+1): for the largest bigint that overflows, and
  // [k,) is the same set of integers.
  if ((type == KeyType::int4 || type == KeyType::int8) &&
      std::get<std::int64_t>(point) == std::numeric_limits<std::int64_t>::max()) {
    p.high.reset();
    p.bounds = "[)";
  }
  return p;
}

RangeParams claim_params(KeyType bound_type, const std::optional<routing::Key>& point, const routing::KeyRange& range) {
  return point ? point_params(bound_type, *point) : range_params(range);
}

routing::KeyRange claimed_keys(MapKind kind, KeyType key_type, const routing::KeyRange& stored) {
  if (kind != MapKind::list || !stored.low) return stored;
  return routing::point_range(bound_type(kind, key_type), *stored.low);
}

}  // namespace shardctl::catalog
