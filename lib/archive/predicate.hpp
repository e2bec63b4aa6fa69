// An archive predicate is the one piece of SQL an operator supplies verbatim. It is never pasted
// into a statement as written: it must be one boolean expression over the root table's
// columns, and what shardctl embeds is the server's own rendering of it.
//
// On each shard, before anything changes: the text is screened (predicate_text.hpp), then the
// server parses it as a CHECK constraint (NOT VALID: no row is read, nothing is evaluated) on a
// temporary copy of the root table, in a transaction that is rolled back. That parse refuses
// unknown columns, other tables, subqueries, aggregates, window and set-returning functions and
// non-boolean results. Every function the expression calls (directly, through its operators,
// type casts, and the CHECK constraints of domains it casts to) must be immutable or stable: a
// volatile one may write, or answer differently on each call. The rendering
// (pg_get_expr, with only pg_catalog on the search path so every other name comes qualified)
// is one parenthesis-safe expression: no text of the operator's can close the parentheses
// shardctl puts around it.
//
// A stable function may still read other tables: the server cannot see inside it.
#pragma once

#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::archive {

// A session that runs statements holding a checked predicate reads string constants as the
// rendering wrote them: with standard_conforming_strings on.
inline constexpr const char* predicate_settings = "SET standard_conforming_strings = on";

// Checks `predicate` on `shard` as a condition on the root table (`schema`, `table`: raw names;
// `shown`: display form for messages) and returns the server's rendering. Sets the archive
// session settings (shardio::session_settings, predicate_settings) on `shard`: a literal such as
// '2024-02-01' for a timestamptz is read in the time zone the archive statements run in.
// Usage Error (64) naming what is wrong and, where there is one, the character it is at.
std::string checked_predicate(shardio::RawConn& shard, const std::string& schema, const std::string& table,
                              const std::string& shown, const std::string& predicate);

}  // namespace shardctl::archive
