// A binary COPY from one connection into another, loaded as several COPY statements in the
// target's open transaction, with a pause on the target between them.
//
// Why: PostgreSQL's COPY FROM writes through a ring of at most 16 MB of shared buffers, so of a
// table's rows loaded in one statement only the last 16 MB are still in shared buffers when the
// statement ends; the rest must be read again from the operating system, into buffers the
// reading backend has never touched. A migration that reads each part back right after loading
// it (migrate/load_digest.hpp) reads it from the ring instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

struct CopyParts {
  // Whether the bytes observed so far end on a whole row (CopyDigest::at_row_end).
  std::function<bool()> at_row_end;
  // Bytes of the stream the next part should hold, asked as each part starts; a part ends at
  // the first row end at or past it.
  std::function<std::uint64_t()> part_bytes;
  // Runs on the target between two parts, when the first has ended (its rows are in the table).
  std::function<void()> between;
};

// Streams `copy_out_sql` (binary) from `from` into `copy_in_sql` (binary) on `to`; every byte
// goes to `observe` first. Parts after the first get a binary header of their own; parts before
// the last end with the binary trailer. Returns the bytes streamed from the source.
std::uint64_t pump_copy_in_parts(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql,
                                 const std::function<void(std::string_view)>& observe, const CopyParts& parts);

}  // namespace shardctl::shardio
