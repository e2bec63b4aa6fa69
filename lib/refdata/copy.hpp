// One shard's copy of a reference table, read on its server: its shape (columns, primary key),
// its size estimate, its whole digest, the bounds of range chunks (on the source), its chunk
// digests and, for some chunks, its rows' keys and hashes (plan.hpp says which chunks).
// The connection runs shardio::session_settings first (row text identical on every server).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "refdata/diff.hpp"
#include "refdata/plan.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::refdata {

struct Shape {
  bool exists = false;
  std::vector<shardio::Column> columns;  // attribute order, no dropped or generated columns
  std::vector<std::string> key;          // primary key columns, raw; empty without one
  bool operator==(const Shape& o) const;  // the same columns (names, types) and key; NOT NULL aside
  // "region_id integer, name text" (for a drift finding).
  std::string column_list() const;
};

Shape read_shape(shardio::RawConn& conn, const std::string& quoted_table);
// `shape` with a column NOT NULL only where it is NOT NULL in `other` too.
Shape not_null_in_both(Shape shape, const Shape& other);
// Whether a column of `shape` is a numeric, whose hash by value needs the servers to agree
// (numeric_probe).
bool has_numeric(const Shape& shape);
// The server's answer to shardio::numeric_probe_sql: servers that give the same one hash
// numerics alike.
std::string numeric_probe(shardio::RawConn& conn);
// How the rows of a table of `shape` are hashed and identified (plan.hpp).
KeySpec key_spec(shardio::RawConn& conn, const Shape& shape, bool numerics_by_value);
// The planner's row estimate (reltuples), or, for a table never analyzed, its size / 32 bytes:
// an estimate too high only costs more digest rows, one too low more rows in the per-row pass.
std::int64_t estimate_rows(shardio::RawConn& conn, const std::string& quoted_table);
ChunkDigest whole_digest(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key);
// How every copy of the table is cut, decided on the source's copy (`conn`): `chunks` range
// chunks' bounds sampled from its keys (estimated at `estimated_rows`) where the key allows them,
// else (or when no bound came out: an empty copy) `chunks` hash chunks.
Chunking plan_chunks(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key, std::int64_t chunks,
                     std::int64_t estimated_rows);
ChunkDigests chunk_digests(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key,
                           const Chunking& chunking);
// The rows of chunks `which` (ascending; keys and hashes), with the chunk of each: range chunks'
// read through the primary key's index, hash chunks' by a scan of the table.
struct ChunkRow {
  std::int64_t chunk;
  RowHash row;
};
std::vector<ChunkRow> chunk_rows(shardio::RawConn& conn, const std::string& quoted_table, const KeySpec& key,
                                 const Chunking& chunking, const std::vector<std::int64_t>& which);

}  // namespace shardctl::refdata
