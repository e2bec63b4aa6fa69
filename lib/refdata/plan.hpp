// How a reference table's copies are compared: cut into chunks by a hash of the primary key,
// one order-independent digest per chunk computed by each shard's server. Pure code: the SQL
// and the arithmetic, no connection.
//
// Why chunks by hash of the key modulo N, not ranges of the key: every shard computes the same
// chunks from its own rows with no boundaries sent to it first, so a comparison is one query
// per shard per table; a missing or extra row changes one chunk only (a range cut from one
// copy's keys shifts when keys are missing); and composite, text and uuid keys need no
// ordering agreed between servers. The price: a chunk's rows are spread over the table, so the
// second, per-row pass over the differing chunks scans the table once (it still sends only the
// keys and row hashes of those chunks).
//
// The digest of a chunk: its row count and the exact numeric sum of hashtextextended(row text,
// 0) over its rows (shardio/row_checksum.hpp, row_hash_sum_fast), under shardio's session
// settings, so equal rows give equal text on every server. A sum, not bit_xor: two equal rows
// would cancel under XOR, and a duplicated row would go unseen. The value digest
// (shardio/value_digest.hpp) is cheaper but covers only some column types (no bytea, floats,
// json, arrays); a reference table may hold any.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shardctl::refdata {

// Rows per chunk aimed at: a differing chunk's per-row pass sends about this many key+hash rows.
inline constexpr std::int64_t rows_per_chunk = 1000;
// The most chunks a table is cut into: at most this many digest rows per shard per table.
inline constexpr std::int64_t max_chunks = 1 << 20;

// The number of chunks for a table of about `estimated_rows` rows (the largest copy's estimate:
// every shard must use the same number). At least 1.
std::int64_t chunk_count(std::int64_t estimated_rows) noexcept;

// What a table's rows are identified by: its primary key's columns (quoted), or, with none,
// the whole row (compared as a multiset of row hashes).
struct KeySpec {
  std::vector<std::string> quoted_key;  // empty: no primary key
  bool by_row() const noexcept { return quoted_key.empty(); }
};

// The chunk of the row read through shardio::row_alias, as an SQL expression in [0, chunks).
std::string chunk_expr(const KeySpec& key, std::int64_t chunks);
// The identity of the row as text: its key as a row's text, or its row hash without a key.
std::string key_text_expr(const KeySpec& key);
// The row's hash, as an SQL expression (what the chunk digest sums).
std::string row_hash_expr();

// SELECT chunk, count, sum of row hashes (text) per non-empty chunk of `quoted_table`.
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
