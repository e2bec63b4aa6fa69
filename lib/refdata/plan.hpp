// How a reference table's copies are compared: cut into chunks, one order-independent digest per
// chunk computed by each shard's server, then the rows of the differing chunks only. Pure code:
// the SQL and the arithmetic, no connection.
//
// Two kinds of chunks. Every copy compared is cut the same way (one Chunking per comparison).
//
// Range chunks, where the primary key is ONE column of a type ordered the same on every server,
// without a collation (smallint, integer, bigint, numeric, uuid, date, timestamp, timestamptz):
// about chunk_count() - 1 ascending bounds are sampled on one copy, the source's (a percentile of
// its keys per bound, from a TABLESAMPLE of about sample_rows_per_chunk rows a chunk, or from
// every row of a small table), and a row's chunk is width_bucket(key, bounds): 0 below the first
// bound, i from bound i up to bound i + 1, the last at or above the last bound. The bounds are
// sent to every copy as a bound parameter, never written into a statement. The gain: a chunk is
// a range of the primary key, so the last pass reads only the differing chunks' rows, through the
// key's index, where hash chunks made it scan the whole table (1.4 s of a 7-9 s comparison of
// 10M rows; bench/README.md, "reference tables compared"). A missing or extra row
// still changes one chunk only (the bounds are fixed before any copy's chunks are digested), and bounds
// that differ from one run to the next do not matter: a comparison uses one set throughout.
//
// Hash chunks for every other table: a text (or varchar) key, a composite key, a key of another
// type, no primary key. A row's chunk is the hash of its key (of the whole row without a key)
// modulo the chunk count: every server computes the same chunks from its own rows with no bounds
// sent first. A text key is not range-chunked because a range of text is a range under one
// collation only: the source's bounds, cut under its collation, would be other ranges (and
// width_bucket other buckets) under another server's collation, so equal copies would seem to
// differ. Composite keys are left to hash chunks too: a bound would be a row of several values,
// each of its columns a type (and maybe a collation) of its own. The price of hash chunks: a
// chunk's rows are spread over the table, so the last pass over the differing chunks scans the
// table once (it still sends only the keys and row hashes of those chunks).
//
// The digest of a set of rows: its row count and the exact sum of a 64-bit hash per row (a
// sum, not bit_xor: two equal rows would cancel under XOR, and a duplicated row would go unseen).
// A row's hash is the XOR of a seeded hash per column (shardio/value_digest.hpp, value_hash_sql):
// a column of a type with a value kind hashed by its value, any other (bytea, floats, json,
// arrays, enums, ...) by its text under shardio's session settings, so equal values give equal
// text on every server. No row is formatted as text: formatting `row::text` was most of the
// cost of a comparison (bench/README.md, "reference tables compared").
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
// digest with 1024 chunks, 3-4.5x with 10,000 (bench/README.md, "reference tables compared").
// Bigger chunks cost bytes instead: a differing chunk of a 1B-row table sends about 1M keys
// and row hashes (some 55 MB), still far under 1% of the table.
inline constexpr std::int64_t max_chunks = 1024;

// Range chunks' bounds are sampled from about this many rows per chunk (TABLESAMPLE SYSTEM: whole
// pages). What the sample costs is the pages it reads: on the 10M rows of bench/reference_compare.sh
// (about 90 a page), about 1% of them, 21-26 ms from the OS cache by hand; 10% took 300 ms. The price: a table loaded in key
// order has neighbouring keys on a page, so a chunk's size is then about the gap between two
// sampled pages, a few times the aim for the largest chunks (on 10M rows: mean 9.8k, largest 71k
// rows). Only the last pass reads a differing chunk's rows, through the index: still far less
// than the whole table the hash chunks' last pass scans.
inline constexpr std::int64_t sample_rows_per_chunk = 100;
// A table estimated at fewer rows than this has its bounds taken from every row (exact, and as
// cheap as a sample at that size).
inline constexpr std::int64_t sample_whole_below = 100'000;

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
  std::string key_hash;                 // SQL: the key's hash, what hash chunks are cut by; empty without a key
  // Range chunks possible: the type the bounds are cast to ("bigint", "uuid", "timestamptz", ...)
  // when the key is one column of a type without a collation; empty: hash chunks only.
  std::string range_type;
  bool by_row() const noexcept { return quoted_key.empty(); }
  bool rangeable() const noexcept { return !range_type.empty(); }
};
// The KeySpec of a table of `columns` whose primary key is `quoted_key` (names among `columns`).
KeySpec key_spec(const std::vector<HashColumn>& columns, const std::vector<std::string>& quoted_key);
// The type range chunks' bounds of a key column of value kind `kind` are cast to; empty for
// kinds that are no range on every server alike (text: collations) or no useful one (boolean).
std::string range_type(std::optional<shardio::ValueKind> kind);

// How one comparison cuts a table into chunks; every copy compared is cut the same way.
struct Chunking {
  std::int64_t count = 1;  // chunks: numbered 0 .. count - 1
  // Range chunks: the ascending, distinct bounds as an array literal of the key's type
  // ("{1000,2000}", count - 1 of them), sampled on the source, sent as a bound parameter.
  // Empty: hash chunks.
  std::string bounds;
  bool by_range() const noexcept { return !bounds.empty(); }
};

// The chunk of the row read through shardio::row_alias, as an SQL expression in [0, chunks):
// hash chunks.
std::string chunk_expr(const KeySpec& key, std::int64_t chunks);
// The bounds of range chunks as an SQL array of the key's type, from `text`, an SQL expression
// of their array literal: "$1" (a bound parameter) gives "$1::bigint[]".
std::string bounds_array(const KeySpec& key, const std::string& text);
// The range chunk of the row read through shardio::row_alias: width_bucket(key, `bounds`), with
// `bounds` an SQL array (bounds_array).
std::string range_chunk_expr(const KeySpec& key, const std::string& bounds);
// A condition on the row read through shardio::row_alias that holds for the rows of range
// chunks `which` (ascending, in [0, chunks)) only, and that a btree index on the key serves:
// one key range per run of neighbouring chunks, ORed, the chunk numbers (shardctl's own
// integers) written as subscripts of `bounds` (an SQL array, bounds_array): chunks 0, 3 and 4
// of 6 are "key < b[1] OR key >= b[3] AND key < b[5]". "true" when `which` is every chunk.
std::string range_where(const KeySpec& key, const std::string& bounds, std::int64_t chunks,
                        const std::vector<std::int64_t>& which);
// The condition selecting the rows of chunks `which` of either kind: range_where for range
// chunks (bounds read from `bounds_text`, an SQL expression of their literal), else the hash
// chunk's number in the chunk numbers, written as a literal.
std::string chunks_where(const KeySpec& key, const Chunking& chunking, const std::vector<std::int64_t>& which,
                         const std::string& bounds_text);

// The percentage of `quoted_table`'s pages a sample for `chunks` range chunks reads (TABLESAMPLE
// SYSTEM), about sample_rows_per_chunk rows a chunk out of `estimated_rows`; none: read every row
// (a small table, or a sample that would read a quarter of it anyway).
std::optional<double> sample_percent(std::int64_t estimated_rows, std::int64_t chunks);
// SELECT the bounds' array literal (text, '{}' for none), and their number: the distinct
// percentiles 1/$1, 2/$1, ... ($1 - 1)/$1 of the key of `quoted_table` (read whole, or through
// TABLESAMPLE SYSTEM ($2) with `sampled`). $1: the chunks aimed at; $2: sample_percent.
std::string sample_bounds_sql(const std::string& quoted_table, const KeySpec& key, bool sampled);
// The identity of the row as text: its key as a row's text, or its row hash without a key.
std::string key_text_expr(const KeySpec& key);

// SELECT count, sum of row hashes (text) of the whole of `quoted_table`.
std::string whole_digest_sql(const std::string& quoted_table, const KeySpec& key);
// SELECT chunk, count, sum of row hashes (text) per non-empty chunk of `quoted_table`, in no
// order (an ORDER BY made the planner sort every row instead of hashing into the chunks).
// Hash chunks.
std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks);
// The same for either kind; range chunks take their bounds' literal as $1.
std::string chunk_digest_sql(const std::string& quoted_table, const KeySpec& key, const Chunking& chunking);
// SELECT chunk, key text, row hash of the rows of the chunks in $1 (a bigint[] literal): hash
// chunks, read by a scan of the whole table.
std::string row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks);
// SELECT chunk, key text, row hash of the rows of range chunks `which` (ascending), $1 the
// bounds' literal: the rows read by key ranges (range_where), through the primary key's index.
std::string range_row_hashes_sql(const std::string& quoted_table, const KeySpec& key, std::int64_t chunks,
                                 const std::vector<std::int64_t>& which);
// The bigint[] literal of `chunks`: "{1,5,9}".
std::string chunk_array(const std::vector<std::int64_t>& chunks);

// Orders `tables` so that every table comes after the tables it references (parents first);
// `references` holds (child, parent) pairs, self references and pairs outside `tables` ignored.
// Ties keep the input order. A cycle is a usage Error naming a table on it.
std::vector<std::string> parents_first(const std::vector<std::string>& tables,
                                       const std::vector<std::pair<std::string, std::string>>& references);

}  // namespace shardctl::refdata
