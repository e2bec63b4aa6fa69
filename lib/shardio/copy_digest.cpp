#include "shardio/copy_digest.hpp"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace shardctl::shardio {

namespace {

// PGCOPY\n\377\r\n\0, then int32 flags and int32 header-extension length.
constexpr std::size_t signature_size = 11;

std::uint32_t be32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | u[3];
}
std::int16_t be16(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::int16_t>((u[0] << 8) | u[1]);
}

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
    std::int16_t fields = be16(d.data() + pos);
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
    ++rows_;
    pos = end;
  }
  return pos;
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

std::string CopyDigest::text() const {
  if (!binary_) return std::to_string(text_.rows()) + ":xxh3t:" + text_.text().substr(5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(sum_));
  return std::to_string(rows_) + ":xxh3:" + buf;
}

}  // namespace shardctl::shardio
