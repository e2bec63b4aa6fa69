// How a reference table's copies are compared: cut into chunks by a hash of the primary key,
// one order-independent digest per chunk computed by each shard's server. Pure code: the SQL
// and the arithmetic, no connection.
//
// Why chunks by hash of the key modulo N, not ranges of the key: every shard computes the same
// chunks from its own rows with no boundaries sent to it first, so digesting a copy's chunks is
// one query; a missing or extra row changes one chunk only (a range cut from one
// copy's keys shifts when keys are missing); and composite, text and uuid keys need no
// ordering agreed between servers. The price: a chunk's rows are spread over the table, so the
// second, per-row pass over the differing chunks scans the table once (it still sends only the
// keys and row hashes of those chunks).
//
// The digest of a set of rows: its row count and the exact sum of a 64-bit hash per row (a
// sum, not bit_xor: two equal rows would cancel under XOR, and a duplicated row would go unseen).
// A row's hash is the XOR of a seeded hash per column (shardio/value_digest.hpp, value_hash_sql):
// a column of a type with a value kind hashed by its value, any other (bytea, floats, json,
// arrays, enums, ...) by its text under shardio's session settings, so equal values give equal
// text on every server. No row is formatted as text: formatting `row::text` was most of the
// cost of a comparison (bench/README.md, "reference tables compared (issue 31)").
//
// A comparison first takes one whole-table digest per copy; only the source and the copies
// whose whole digest differs are then cut into chunks, and only the differing chunks' rows are
// read (their keys and row hashes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardio/value_digest.hpp"

namespace shardctl::refdata {

// Rows per chunk aimed at, below max_chunks: a differing chunk's per-row pass sends about this many
// key+hash rows.
inline constexpr std::int64_t rows_per_chunk = 1000;
// The most chunks a table is cut into. The server hashes every row into its chunk's aggregate,
// and beyond about a thousand chunks that costs far more: on 10M rows, about 1.5x a whole-table
// digest with 1024 chunks, 3-4.5x with 10,000 (bench/README.md, "reference tables compared (issue 31)").
// Bigger chunks cost bytes instead: a differing chunk of a 1B-row table sends about 1M keys
// and row hashes (some 55 MB), still far under 1% of the table.
inline constexpr std::int64_t max_chunks = 1024;

// The number of chunks for a table of about `estimated_rows` rows (the largest copy's estimate:
// every shard must use the same number). At least 1.
std::int64_t chunk_count(std::int64_t estimated_rows) noexcept;

// A column as the row hash reads it.
struct HashColumn {
  std::string quoted;                      // the column's name, quoted
  std::optional<shardio::ValueKind> kind;  // none: hashed by its text
  bool not_null = false;                   // on every copy compared: no coalesce() needed
};
// The HashColumn of a column of format_type() `type`. `numerics_by_value`: every server
// compared computes the same hash_numeric_extended (shardio::numeric_probe_sql gave the same
// value on each); else numerics are hashed by their text.
HashColumn hash_column(std::string quoted, const std::string& type, bool not_null, bool numerics_by_value);
// The XOR of the columns' seeded hashes (seed: position + 1), each column read through
// shardio::row_alias, as an SQL bigint expression.
std::string columns_hash_expr(const std::vector<HashColumn>& columns);

// What a table's rows are identified by and hashed with: its primary key's columns (quoted), or,
// with none, the whole row (compared as a multiset of row hashes).
struct KeySpec {
  std::vector<std::string> quoted_key;  // empty: no primary key
  std::string row_hash;                 // SQL: the row's hash
  std::string key_hash;                 // SQL: the key's hash, what chunks are cut by; empty without a key
  bool by_row() const noexcept { return quoted_key.empty(); }
};
// The KeySpec of a table of `columns` whose primary key is `quoted_key` (names among `columns`).
KeySpec key_spec(const std::vector<HashColumn>& columns, const std::vector<std::string>& quoted_key);

// The chunk of the row read through shardio::row_alias, as an SQL expression in [0, chunks).
std::string chunk_expr(const KeySpec& key, std::int64_t chunks);
// The identity of the row as text: its key as a row's text, or its row hash without a key.
std::string key_text_expr(const KeySpec& key);

// SELECT count, sum of row hashes (text) of the whole of `quoted_table`.
std::string whole_digest_sql(const std::string& quoted_table, const KeySpec& key);
// SELECT chunk, count, sum of row hashes (text) per non-empty chunk of `quoted_table`, in no
// order (an ORDER BY made the planner sort every row instead of hashing into the chunks).
std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks);
// SELECT chunk, key text, row hash of the rows of the chunks in $1 (a bigint[] literal).
std::string row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks);
// The bigint[] literal of `chunks`: "{1,5,9}".
std::string chunk_array(const std::vector<std::int64_t>& chunks);

// Orders `tables` so that every table comes after the tables it references (parents first);
// `references` holds (child, parent) pairs, self references and pairs outside `tables` ignored.
// Ties keep the input order. A cycle is a usage Error naming a table on it.
std::vector<std::string> parents_first(const std::vector<std::string>& tables,
                                       const std::vector<std::pair<std::string, std::string>>& references);

}  // namespace shardctl::refdata
