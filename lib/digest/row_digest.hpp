// The order-independent digest of rows in COPY text format, computed as the bytes stream past:
// the row count and the wrapping 64-bit sum of XXH3-64 of each row's bytes (its newline
// included). COPY text ends every row with a newline and escapes newlines inside values, so
// rows are found without parsing them.
//
// Two servers' COPY output of the same rows is the same text when both sessions use
// shardio::session_settings, so a stream hashed on the way out and the destination's copy read
// back give equal digests exactly when the same multiset of rows arrived (but for a 2^-64
// chance per difference). It is a check against loss and corruption, not against forgery.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardctl::digest {

class RowDigest {
 public:
  // Adds the rows in `chunk`. A row may be split across chunks (file blocks); the part after
  // the last newline waits for the next chunk.
  void add(std::string_view chunk);
  // The row count; a trailing partial row (no newline yet) is not counted.
  std::int64_t rows() const noexcept { return rows_; }
  // "xxh3:" and 16 hex digits of the sum: what the journal and messages show.
  std::string text() const;
  // Whether every chunk ended on a row boundary (a stream that stopped inside a row did not).
  bool complete() const noexcept { return partial_.empty(); }

 private:
  void add_row(std::string_view row) noexcept;

  std::int64_t rows_ = 0;
  std::uint64_t sum_ = 0;
  std::string partial_;
};

}  // namespace shardctl::digest
