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

// Text keys are compared and hashed as bytes everywhere in shardctl, as the client routes
// them, whatever the column's collation: under COLLATE "C" (`k COLLATE "C" >= 'm' COLLATE "C"`,
// `hashtextextended(k COLLATE "C", 0)`). A column's own collation may order text otherwise
// (ICU, or libc en_US: 'a' < 'B'), and a nondeterministic one makes hashtextextended hash the
// collation's sort key ('Acme' and 'ACME' alike) instead of the bytes.
//
// A table's key column as batch statements compare it. own_collation: the column's own
// collation gives the same answers as bytes for this map's statements (see
// own_collation_fits() in shard_schema.hpp: it sorts bytewise for range and list maps, it is
// deterministic for hash maps), so text keys are written without COLLATE "C" and an ordinary
// btree on the column, or an expression index on hashtextextended(k, 0), serves them.
// Otherwise they need COLLATE "C" and an index on (k COLLATE "C") or on
// (hashtextextended(k COLLATE "C", 0)); key_expression() is the expression to index.
struct KeyColumn {
  std::string quoted;
  bool own_collation = false;
};

// The expression batch filters compare for this column: the key, or its hash (see above).
std::string key_expression(const RouteSpace& space, const KeyColumn& column);

// COPY cannot take parameters, so bounds are written as literals quoted by libpq
// (PQescapeLiteral) and cast to the key type; keys were already parsed and re-formatted.
std::string key_filter(RawConn& conn, const RouteSpace& space, const KeyColumn& column, const routing::KeyRange& range);
// The same for a column compared under COLLATE "C" (own_collation = false).
std::string key_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                       const routing::KeyRange& range);

// The keys an operation claims, as journaled: a range [low, high), or a list point stored as
// [k,k] (`point`: its upper bound is inclusive), which key_filter() would read as empty.
std::string claim_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                         const routing::KeyRange& range, bool point);

// A key (or, for hash maps, a hash value) as a literal comparable with route_expression().
std::string key_literal(RawConn& conn, const RouteSpace& space, const routing::Key& key);

// The expression the filters of check, archive and stats compare: the key itself (text under
// COLLATE "C"), or its hash (of text under COLLATE "C").
std::string route_expression(const RouteSpace& space, const std::string& quoted_column);

}  // namespace shardctl::shardio
