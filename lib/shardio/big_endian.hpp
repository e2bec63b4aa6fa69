// Reading the network byte order of COPY's binary format.
#pragma once

#include <cstdint>

namespace shardctl::shardio {

inline std::uint32_t be32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | u[3];
}
inline std::uint16_t be16(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::uint16_t>((u[0] << 8) | u[1]);
}
inline std::uint64_t be64(const char* p) { return (std::uint64_t{be32(p)} << 32) | be32(p + 4); }

}  // namespace shardctl::shardio
