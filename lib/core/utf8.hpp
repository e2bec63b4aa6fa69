// UTF-8 checks for text the operator types: PostgreSQL databases here are UTF-8, JSON output
// must be UTF-8, and an error message must not echo bytes a terminal cannot show.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace shardctl {
namespace utf8_detail {


// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is not one.
inline std::size_t sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte (RFC 3629 table)
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;  // no surrogates
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;  // nothing past U+10FFFF
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace utf8_detail

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
inline bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto n = utf8_detail::sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `s` with control characters and bytes that are not UTF-8 written as \xNN.
inline std::string printable(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto n = utf8_detail::sequence_length(s, i);
    auto c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace shardctl
