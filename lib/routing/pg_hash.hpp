// PostgreSQL's 64-bit extended hash functions with seed 0, computed client-side so that
// shardctl and a shard's server agree on which bucket a key falls in. Ported from
// PostgreSQL 15 src/common/hashfn.c (hash_bytes_extended / hash_bytes_uint32_extended)
// and the type-specific wrappers in src/backend/access/hash/hashfunc.c and utils/adt/uuid.c.
#pragma once

#include <cstdint>
#include <string_view>

#include "routing/key.hpp"

namespace shardctl::routing {

std::int64_t pg_hashint4extended(std::int32_t value) noexcept;     // hashint4extended(v, 0)
std::int64_t pg_hashint8extended(std::int64_t value) noexcept;     // hashint8extended(v, 0)
std::int64_t pg_hashtextextended(std::string_view bytes) noexcept; // hashtextextended(v, 0), deterministic collation
std::int64_t pg_uuid_hash_extended(const Uuid& value) noexcept;    // uuid_hash_extended(v, 0)

// The seeded forms, as hash_bytes_extended(k, len, seed), hash_bytes_uint32_extended(k, seed)
// and hashint8extended(v, seed) compute them (a non-zero seed perturbs the state first).
std::uint64_t pg_hash_bytes_extended(std::string_view bytes, std::uint64_t seed) noexcept;
std::uint64_t pg_hash_uint32_extended(std::uint32_t value, std::uint64_t seed) noexcept;
std::uint64_t pg_hashint8_seeded(std::int64_t value, std::uint64_t seed) noexcept;

// The hash a hash map routes `key` of `type` by.
std::int64_t hash_key(KeyType type, const Key& key) noexcept;

// The SQL expression, over an already-quoted column expression, that computes the same value
// server-side (e.g. "hashint8extended(\"customer_id\", 0)").
std::string hash_sql_expression(KeyType type, std::string_view quoted_column);

}  // namespace shardctl::routing
