#include "digest/row_digest.hpp"

#include <xxhash.h>

#include <cstdio>

#include "core/lines.hpp"

namespace shardctl::digest {

void RowDigest::add_row(std::string_view row) noexcept {
  sum_ += XXH3_64bits(row.data(), row.size());  // unsigned: wraps, so the order never matters
  ++rows_;
}

void RowDigest::add(std::string_view chunk) {
  for_each_line(chunk, partial_, [this](std::string_view row) { add_row(row); });
}

std::string RowDigest::text() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh3:%016llx", static_cast<unsigned long long>(sum_));
  return buf;
}

}  // namespace shardctl::digest
