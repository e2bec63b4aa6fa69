#include "shardio/copy_digest.hpp"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "shardio/big_endian.hpp"

namespace shardctl::shardio {

namespace {

// PGCOPY\n\377\r\n\0, then int32 flags and int32 header-extension length.
constexpr std::size_t signature_size = 11;

}  // namespace

std::size_t CopyDigest::consume(std::string_view d) {
  std::size_t pos = 0;
  if (!header_done_) {
    if (d.size() < signature_size + 8) return 0;
    if (std::memcmp(d.data(), "PGCOPY\n\377\r\n\0", signature_size) != 0)
      throw internal_error("a binary COPY stream did not start with its signature");
    std::size_t ext = be32(d.data() + signature_size + 4);
    if (d.size() < signature_size + 8 + ext) return 0;
    pos = signature_size + 8 + ext;
    header_done_ = true;
  }
  while (pos + 2 <= d.size()) {
    if (ended_) throw internal_error("a binary COPY stream had bytes after its trailer");
    auto fields = static_cast<std::int16_t>(be16(d.data() + pos));
    if (fields == -1) {
      ended_ = true;
      pos += 2;
      continue;
    }
    std::size_t end = pos + 2;
    bool whole = true;
    for (int f = 0; f < fields; ++f) {
      if (end + 4 > d.size()) {
        whole = false;
        break;
      }
      auto len = static_cast<std::int32_t>(be32(d.data() + end));
      end += 4;
      if (len > 0) end += static_cast<std::size_t>(len);
      if (end > d.size()) {
        whole = false;
        break;
      }
    }
    if (!whole) break;
    sum_ += XXH3_64bits(d.data() + pos, end - pos);  // unsigned: wraps, so the order never matters
    if (!kinds_.empty()) add_values(d.substr(pos, end - pos));
    ++rows_;
    pos = end;
  }
  return pos;
}

void CopyDigest::add_values(std::string_view tuple) {
  std::size_t fields = static_cast<std::uint16_t>(be16(tuple.data()));
  if (fields != kinds_.size()) throw internal_error("a binary COPY row had " + std::to_string(fields) + " fields, not " + std::to_string(kinds_.size()));
  std::uint64_t row = 0;
  std::size_t at = 2;
  for (std::size_t f = 0; f < fields; ++f) {
    auto len = static_cast<std::int32_t>(be32(tuple.data() + at));
    at += 4;
    if (len < 0) continue;  // NULL adds 0
    row ^= value_hash(kinds_[f], tuple.substr(at, static_cast<std::size_t>(len)), f);
    at += static_cast<std::size_t>(len);
  }
  values_.add(static_cast<std::int64_t>(row));
}

void CopyDigest::add(std::string_view chunk) {
  if (!binary_) return text_.add(chunk);
  if (pending_.empty()) {
    std::size_t used = consume(chunk);
    pending_.assign(chunk.substr(used));
    return;
  }
  pending_.append(chunk);
  std::size_t used = consume(pending_);
  pending_.erase(0, used);
}

void CopyDigest::merge(const CopyDigest& other) {
  if (!binary_ || !other.binary_) throw internal_error("only binary COPY digests can be merged");
  rows_ += other.rows_;
  sum_ += other.sum_;  // wraps, as add() does
  values_.merge(other.values_);
}

std::string CopyDigest::text() const {
  if (!binary_) return std::to_string(text_.rows()) + ":xxh3t:" + text_.text().substr(5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(sum_));
  return std::to_string(rows_) + ":xxh3:" + buf;
}

}  // namespace shardctl::shardio
