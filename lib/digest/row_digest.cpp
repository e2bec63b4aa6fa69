#include "digest/row_digest.hpp"

#include <xxhash.h>

#include <cstdio>

namespace shardctl::digest {

void RowDigest::add_row(std::string_view row) noexcept {
  sum_ += XXH3_64bits(row.data(), row.size());  // unsigned: wraps, so the order never matters
  ++rows_;
}

void RowDigest::add(std::string_view chunk) {
  std::size_t start = 0;
  for (;;) {
    auto nl = chunk.find('\n', start);
    if (nl == std::string_view::npos) break;
    if (partial_.empty()) {
      add_row(chunk.substr(start, nl + 1 - start));
    } else {
      partial_.append(chunk.substr(start, nl + 1 - start));
      add_row(partial_);
      partial_.clear();
    }
    start = nl + 1;
  }
  if (start < chunk.size()) partial_.append(chunk.substr(start));
}

std::string RowDigest::text() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh3:%016llx", static_cast<unsigned long long>(sum_));
  return buf;
}

}  // namespace shardctl::digest
