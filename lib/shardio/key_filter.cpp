#include "shardio/key_filter.hpp"

#include "routing/pg_hash.hpp"

namespace shardctl::shardio {
using routing::KeyType;
using routing::MapKind;

std::string route_expression(const RouteSpace& space, const std::string& quoted_column) {
  return key_expression(space, KeyColumn{quoted_column, false});
}

std::string key_expression(const RouteSpace& space, const KeyColumn& column) {
  // Text keys hash and order bytewise everywhere in shardctl, whatever the column's collation.
  std::string key = space.key_type == KeyType::text && !column.own_collation ? column.quoted + " COLLATE \"C\"" : column.quoted;
  if (space.kind == MapKind::hash) return routing::hash_sql_expression(space.key_type, key);
  return key;
}

std::string key_literal(RawConn& conn, const RouteSpace& space, const routing::Key& key) {
  std::string lit = conn.literal(routing::format_key(key));
  if (space.kind == MapKind::hash) return lit + "::bigint";
  switch (space.key_type) {
    case KeyType::int4:
    case KeyType::int8: return lit + "::bigint";
    case KeyType::text: return lit + " COLLATE \"C\"";
    case KeyType::uuid: return lit + "::uuid";
  }
  return lit;
}

std::string key_filter(RawConn& conn, const RouteSpace& space, const KeyColumn& column, const routing::KeyRange& range) {
  // A text bound compared in the column's own collation is a plain literal (it takes the
  // column's collation); hash values are bigints either way.
  bool plain_text = column.own_collation && space.kind != MapKind::hash && space.key_type == KeyType::text;
  std::string expr = key_expression(space, column);
  auto literal = [&](const routing::Key& k) {
    return plain_text ? conn.literal(routing::format_key(k)) : key_literal(conn, space, k);
  };
  std::string out;
  if (range.low) out = expr + " >= " + literal(*range.low);
  if (range.high) out += (out.empty() ? "" : " AND ") + expr + " < " + literal(*range.high);
  return out.empty() ? "true" : out;
}

std::string key_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                       const routing::KeyRange& range) {
  return key_filter(conn, space, KeyColumn{quoted_column, false}, range);
}

std::string claim_filter(RawConn& conn, const RouteSpace& space, const std::string& quoted_column,
                         const routing::KeyRange& range, bool point) {
  if (point && range.low) return route_expression(space, quoted_column) + " = " + key_literal(conn, space, *range.low);
  return key_filter(conn, space, quoted_column, range);
}

}  // namespace shardctl::shardio
