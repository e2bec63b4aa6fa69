// The order-independent checksum of a set of rows that verify, purge and rehome compare: the
// row count and the exact (numeric) sum of the first 64 bits of md5 of each row's text.
#pragma once

#include <string>

namespace shardctl::shardio {

// Session settings for shard connections whose row text is compared across servers: row text
// identical on every server, so checksums compare; and commits durable whatever the server's
// default (a copy or purge that a crash could undo after it was journaled would lose or
// duplicate rows). Every connection that verifies rows by checksum runs them first.
inline constexpr const char* session_settings =
    "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET extra_float_digits = 3; SET bytea_output = 'hex'; "
    "SET IntervalStyle = postgres; SET synchronous_commit = on";

// The FROM item (subquery alias or CTE name) the rows are read through. `alias::text` is the
// whole row only while no column has the alias's name (a table with a column "x" turned
// `x::text` into that column), so the alias is one no schema uses.
inline constexpr const char* row_alias = "shardctl_row";

// The sum over the rows of FROM item `row_alias`, as an SQL expression.
inline std::string row_hash_sum() {
  return std::string("coalesce(sum(('x' || substr(md5(") + row_alias + "::text), 1, 16))::bit(64)::bigint::numeric), 0)";
}

}  // namespace shardctl::shardio
