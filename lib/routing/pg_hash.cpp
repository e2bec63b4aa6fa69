// Bob Jenkins' lookup3 as PostgreSQL uses it (src/common/hashfn.c). PostgreSQL reads the key
// a word at a time when aligned and byte by byte otherwise; on little-endian machines both
// paths give the same value, so this port reads bytes in little-endian order, which makes it
// correct whatever this process's own alignment or byte order. A big-endian *server* hashes
// text and uuid differently (its word loads differ); shards are assumed little-endian
// (x86-64, arm64), as every mainstream PostgreSQL platform today is.
#include "routing/pg_hash.hpp"

#include <string>

namespace shardctl::routing {
namespace {

constexpr std::uint32_t rot(std::uint32_t x, int k) noexcept { return (x << k) | (x >> (32 - k)); }

inline void mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) noexcept {
  a -= c; a ^= rot(c, 4);  c += b;
  b -= a; b ^= rot(a, 6);  a += c;
  c -= b; c ^= rot(b, 8);  b += a;
  a -= c; a ^= rot(c, 16); c += b;
  b -= a; b ^= rot(a, 19); a += c;
  c -= b; c ^= rot(b, 4);  b += a;
}

inline void final_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) noexcept {
  c ^= b; c -= rot(b, 14);
  a ^= c; a -= rot(c, 11);
  b ^= a; b -= rot(a, 25);
  c ^= b; c -= rot(b, 16);
  a ^= c; a -= rot(c, 4);
  b ^= a; b -= rot(a, 14);
  c ^= b; c -= rot(b, 24);
}

inline std::uint32_t le32(const unsigned char* k) noexcept {
  return std::uint32_t{k[0]} | (std::uint32_t{k[1]} << 8) | (std::uint32_t{k[2]} << 16) |
         (std::uint32_t{k[3]} << 24);
}

// hash_bytes_extended(k, keylen, seed): a non-zero seed perturbs the state first.
std::uint64_t hash_bytes_extended(const unsigned char* k, std::size_t keylen, std::uint64_t seed = 0) noexcept {
  auto len = static_cast<std::uint32_t>(keylen);
  std::uint32_t a, b, c;
  a = b = c = 0x9e3779b9u + len + 3923095u;
  if (seed != 0) {
    a += static_cast<std::uint32_t>(seed >> 32);
    b += static_cast<std::uint32_t>(seed);
    mix(a, b, c);
  }
  while (len >= 12) {
    a += le32(k);
    b += le32(k + 4);
    c += le32(k + 8);
    mix(a, b, c);
    k += 12;
    len -= 12;
  }
  // The last 11 bytes; the lowest byte of c is reserved for the length.
  switch (len) {
    case 11: c += std::uint32_t{k[10]} << 24; [[fallthrough]];
    case 10: c += std::uint32_t{k[9]} << 16; [[fallthrough]];
    case 9: c += std::uint32_t{k[8]} << 8; [[fallthrough]];
    case 8: b += std::uint32_t{k[7]} << 24; [[fallthrough]];
    case 7: b += std::uint32_t{k[6]} << 16; [[fallthrough]];
    case 6: b += std::uint32_t{k[5]} << 8; [[fallthrough]];
    case 5: b += k[4]; [[fallthrough]];
    case 4: a += std::uint32_t{k[3]} << 24; [[fallthrough]];
    case 3: a += std::uint32_t{k[2]} << 16; [[fallthrough]];
    case 2: a += std::uint32_t{k[1]} << 8; [[fallthrough]];
    case 1: a += k[0]; break;
    default: break;
  }
  final_mix(a, b, c);
  return (std::uint64_t{b} << 32) | c;
}

// hash_bytes_uint32_extended(k, seed).
std::uint64_t hash_uint32_extended(std::uint32_t k, std::uint64_t seed = 0) noexcept {
  std::uint32_t a, b, c;
  a = b = c = 0x9e3779b9u + 4u + 3923095u;
  if (seed != 0) {
    a += static_cast<std::uint32_t>(seed >> 32);
    b += static_cast<std::uint32_t>(seed);
    mix(a, b, c);
  }
  a += k;
  final_mix(a, b, c);
  return (std::uint64_t{b} << 32) | c;
}

}  // namespace

std::int64_t pg_hashint4extended(std::int32_t value) noexcept {
  return static_cast<std::int64_t>(hash_uint32_extended(static_cast<std::uint32_t>(value)));
}

std::int64_t pg_hashint8extended(std::int64_t value) noexcept {
  // hashint8 folds the high half into the low one so that values fitting in int4 hash like
  // int4 (cross-type hash joins rely on it).
  return static_cast<std::int64_t>(pg_hashint8_seeded(value, 0));
}

std::uint64_t pg_hash_bytes_extended(std::string_view bytes, std::uint64_t seed) noexcept {
  return hash_bytes_extended(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), seed);
}

std::uint64_t pg_hash_uint32_extended(std::uint32_t value, std::uint64_t seed) noexcept {
  return hash_uint32_extended(value, seed);
}

std::uint64_t pg_hashint8_seeded(std::int64_t value, std::uint64_t seed) noexcept {
  auto lohalf = static_cast<std::uint32_t>(value);
  auto hihalf = static_cast<std::uint32_t>(static_cast<std::uint64_t>(value) >> 32);
  lohalf ^= (value >= 0) ? hihalf : ~hihalf;
  return hash_uint32_extended(lohalf, seed);
}

std::int64_t pg_hashtextextended(std::string_view bytes) noexcept {
  return static_cast<std::int64_t>(
      hash_bytes_extended(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

std::int64_t pg_uuid_hash_extended(const Uuid& value) noexcept {
  return static_cast<std::int64_t>(hash_bytes_extended(value.data(), value.size()));
}

std::int64_t hash_key(KeyType type, const Key& key) noexcept {
  switch (type) {
    case KeyType::int4: return pg_hashint4extended(static_cast<std::int32_t>(std::get<std::int64_t>(key)));
    case KeyType::int8: return pg_hashint8extended(std::get<std::int64_t>(key));
    case KeyType::text: return pg_hashtextextended(std::get<std::string>(key));
    case KeyType::uuid: return pg_uuid_hash_extended(std::get<Uuid>(key));
  }
  return 0;
}

std::string hash_sql_expression(KeyType type, std::string_view quoted_column) {
  std::string col(quoted_column);
  switch (type) {
    case KeyType::int4: return "hashint4extended(" + col + ", 0)";
    case KeyType::int8: return "hashint8extended(" + col + ", 0)";
    case KeyType::text: return "hashtextextended(" + col + ", 0)";
    case KeyType::uuid: return "uuid_hash_extended(" + col + ", 0)";
  }
  return {};
}

}  // namespace shardctl::routing
