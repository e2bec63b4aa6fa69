// The order-independent digest of the rows of a COPY stream, binary or text, computed as the
// bytes pass: the row count and the wrapping 64-bit sum of XXH3-64 of each row's bytes. A
// migration hashes the source's stream on its way to the target, then the target's rows read
// back the same way (and the purge's DELETE ... RETURNING, streamed out the same way): equal
// digests mean the same multiset of rows, byte for byte, but for a 2^-64 chance per
// difference. It detects lost, extra, duplicated or changed rows; it is not meant to resist
// someone forging rows.
//
// Binary COPY (the fast load) is hashed tuple by tuple: field count, each field's length and
// bytes. Two servers send the same bytes for the same values of the same types, except where
// the wire format embeds a type's OID (arrays and composites of types a database created
// itself); such tables are copied as text (see binary_copy_is_portable).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "digest/row_digest.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::shardio {

class CopyDigest {
 public:
  explicit CopyDigest(bool binary) : binary_(binary) {}
  // Also takes the value digest (value_digest.hpp) of a binary stream whose columns have these
  // kinds, one per field.
  CopyDigest(bool binary, std::vector<ValueKind> value_kinds) : binary_(binary), kinds_(std::move(value_kinds)) {}
  // Adds the bytes of the stream; rows may be split anywhere across chunks.
  void add(std::string_view chunk);
  std::int64_t rows() const noexcept { return binary_ ? rows_ : text_.rows(); }
  // "COUNT:xxh3:HEX" (binary) or "COUNT:xxh3t:HEX" (text): what the journal keeps per table.
  std::string text() const;
  // "COUNT:SUM", the value digest of the rows (only when constructed with value kinds).
  std::string value_text() const { return values_.text(); }
  // Adds the rows of another binary stream, e.g. one part of a table that another connection
  // read: the digest of a table read in parts is the merge of its parts' digests.
  void merge(const CopyDigest& other);
  // Whether the stream ended on a row boundary, its binary trailer seen.
  bool complete() const noexcept { return binary_ ? (ended_ && pending_.empty()) : text_.complete(); }
  // Whether the binary stream so far ends on a row boundary after its header, before its
  // trailer: where it may be cut into separate COPY statements (copy_parts.hpp).
  bool at_row_end() const noexcept { return binary_ && header_done_ && pending_.empty() && !ended_; }

 private:
  // Consumes whole tuples (and the header) from `data`; returns how many bytes it used.
  std::size_t consume(std::string_view data);
  // Adds one whole tuple's row hash to the value digest.
  void add_values(std::string_view tuple);

  bool binary_;
  digest::RowDigest text_;
  bool header_done_ = false, ended_ = false;
  std::int64_t rows_ = 0;
  std::uint64_t sum_ = 0;
  std::string pending_;  // an incomplete tuple waiting for the next chunk
  std::vector<ValueKind> kinds_;
  ValueSum values_;
};

// Whether a journaled per-table value ("count:..." ) came from a CopyDigest (else it is the
// older md5-sum form that row_checksum.hpp computes in SQL).
inline bool is_copy_digest(const std::string& value) { return value.find(":xxh3") != std::string::npos; }

}  // namespace shardctl::shardio
