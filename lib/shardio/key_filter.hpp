// The SQL predicate that selects a batch's rows on a shard: a key range of a range map, a
// hash-value range of a hash map, or one point of a list map.
#pragma once

#include <string>

#include "routing/key.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

struct RouteSpace {
  routing::MapKind kind;
  routing::KeyType key_type;
};

// A table's key column as batch statements compare it. native_order: the column's own
// collation sorts text bytewise (C or POSIX, or "default" in a database whose collation is
// C), so text comparisons are written without COLLATE "C" and an ordinary btree on the
// column serves them. Otherwise they need COLLATE "C" (and an index on (col COLLATE "C")).
// Only text keys of range and list maps look at it.
struct KeyColumn {
  std::string quoted;
  bool native_order = false;
};

// COPY cannot take parameters, so bounds are written as literals quoted by libpq
// (PQescapeLiteral) and cast to the key type; keys were already parsed and re-formatted.
std::string key_filter(RawConn& conn, const RouteSpace& space, const KeyColumn& column, const routing::KeyRange& range);
// The same for a column compared under COLLATE "C" (native_order = false).
std::string key_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                       const routing::KeyRange& range);

// The keys an operation claims, as journaled: a range [low, high), or a list point stored as
// [k,k] (`point`: its upper bound is inclusive), which key_filter() would read as empty.
std::string claim_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                         const routing::KeyRange& range, bool point);

// A key (or, for hash maps, a hash value) as a literal comparable with route_expression().
std::string key_literal(RawConn& conn, const RouteSpace& space, const routing::Key& key);

// The expression the guard and the filter compare: the key itself, or its hash.
std::string route_expression(const RouteSpace& space, const std::string& quoted_column);

}  // namespace shardctl::shardio
