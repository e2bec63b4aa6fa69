// What moving, checking or archiving rows needs to know about a table on one shard, read from
// pg_catalog: its columns, its key index, its foreign keys, its triggers.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "routing/key.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

struct Column {
  std::string name;
  std::string type;  // format_type(), to check source and target agree
  bool not_null = false;
};

// Columns in attribute order (no dropped or generated ones); empty when the table is missing.
std::vector<Column> table_columns(RawConn& conn, const std::string& quoted_table);

enum class KeyIndex { none, non_leading, leading };
// Whether a primary key or unique index contains the key column, and leads with it.
KeyIndex key_index(RawConn& conn, const std::string& quoted_table, const std::string& key_column);

// Primary key columns in index order (empty when none).
std::vector<std::string> primary_key(RawConn& conn, const std::string& quoted_table);

// Orders `quoted_tables` so every table comes after the tables it references (parents first).
std::vector<std::string> fk_order(RawConn& conn, const std::vector<std::string>& quoted_tables);

// Sorts `items` parents first by fk_order() of their tables, `quoted(item)` naming each one's
// table; items fk_order() does not place keep their order, last.
template <typename T, typename Quoted>
void sort_parents_first(RawConn& conn, std::vector<T>& items, Quoted quoted) {
  std::vector<std::string> tables;
  for (const auto& i : items) tables.push_back(quoted(i));
  auto order = fk_order(conn, tables);
  auto rank = [&](const T& i) { return std::find(order.begin(), order.end(), quoted(i)) - order.begin(); };
  std::stable_sort(items.begin(), items.end(), [&](const T& x, const T& y) { return rank(x) < rank(y); });
}

// Whether statements of a map of `kind` may compare and hash the key column in its own
// collation and still get the byte semantics shardctl routes by (KeyColumn::own_collation).
// Range and list maps: the collation sorts bytewise, "C" or "POSIX", or the database default
// when the database's (libc) collation is C or POSIX. Hash maps: the collation is deterministic
// (hashtextextended hashes the bytes then; under a nondeterministic collation it hashes the
// collation's sort key, which no client-side hash reproduces). False for non-text columns.
bool own_collation_fits(RawConn& conn, const std::string& quoted_table, const std::string& key_column,
                        routing::MapKind kind);

// User (non-internal) DELETE triggers, shardctl's own guard's among them (shardside::is_guard_trigger).
std::vector<std::string> delete_triggers(RawConn& conn, const std::string& quoted_table);

}  // namespace shardctl::shardio

namespace shardctl::shardio {

// Whether binary COPY of the table gives the same bytes on every server for the same rows:
// false when a column's wire format embeds a type OID a database assigned itself (arrays of
// user-defined types, composite types). Such tables are copied and hashed as text.
bool binary_copy_is_portable(RawConn& conn, const std::string& quoted_table);

// Whether this session may set session_replication_role (superuser, or granted SET on the
// parameter): the role can skip FK triggers. Other errors propagate.
bool may_skip_triggers(RawConn& conn);

// User triggers on the table (or its partitions) that session_replication_role = replica
// would skip (enabled on origin only, not internal), as "name (events)".
std::vector<std::string> origin_triggers(RawConn& conn, const std::string& quoted_table);

}  // namespace shardctl::shardio
