// Keys of a shard map: their types, parsing, canonical text and total order.
// Pure code: no I/O, no database.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/words.hpp"

namespace shardctl::routing {

enum class KeyType { int4, int8, text, uuid };  // spelled int, bigint, text, uuid
enum class MapKind { list, range, hash };
inline constexpr auto key_type_words =
    words<KeyType>({{KeyType::int4, "int"}, {KeyType::int8, "bigint"}, {KeyType::text, "text"}, {KeyType::uuid, "uuid"}})
        .named("key type");
inline constexpr auto map_kind_words =
    words<MapKind>({{MapKind::list, "list"}, {MapKind::range, "range"}, {MapKind::hash, "hash"}}).named("map kind");
constexpr const auto& words_of(KeyType) noexcept { return key_type_words; }
constexpr const auto& words_of(MapKind) noexcept { return map_kind_words; }
using shardctl::operator<<;
using shardctl::to_text;

// A key type's word, or PostgreSQL's own spelling of it (int4, integer, int8); throws a usage
// Error naming the choices. (A map kind has only its words: parse_word<MapKind>.)
KeyType parse_key_type(std::string_view name);

using Uuid = std::array<std::uint8_t, 16>;

// A key value, normalized: int and bigint as int64, text as its bytes, uuid as 16 bytes.
using Key = std::variant<std::int64_t, std::string, Uuid>;

// Parses `text` as a key of `type`. Throws a usage Error ("'abc' is not a valid bigint key")
// for anything that does not parse exactly (no trailing junk, int in 32-bit range, uuid in
// any form PostgreSQL accepts: with or without hyphens, braces, any case).
Key parse_key(KeyType type, std::string_view text);

// Non-throwing parse for hot loops (lookup streaming). Returns false when it does not parse.
bool try_parse_int64(std::string_view text, std::int64_t& out) noexcept;
bool try_parse_uuid(std::string_view text, Uuid& out) noexcept;

// True when `key` holds the representation of `type` (for int: an int64 within 32 bits).
bool key_matches_type(KeyType type, const Key& key) noexcept;

// Canonical text: decimal ints, raw text, lowercase hyphenated uuid (as PostgreSQL prints it).
std::string format_key(const Key& key);
// A range bound's text: nullopt for an unbounded end.
std::optional<std::string> format_bound(const std::optional<Key>& key);

// Total order: ints numerically, text bytewise (C collation), uuid bytewise (as PostgreSQL).
std::strong_ordering compare_keys(const Key& a, const Key& b) noexcept;

// A half-open range [low, high); an absent bound is unbounded.
struct KeyRange {
  std::optional<Key> low;
  std::optional<Key> high;
};

// Parses "LOW..HIGH", "LOW..", "..HIGH" (and ".." for everything). Throws a usage Error when
// a bound does not parse, or low >= high ("empty range 10..5").
KeyRange parse_range(KeyType type, std::string_view text);
std::string format_range(const KeyRange& range);  // "LOW..HIGH" with empty unbounded sides

bool range_contains(const KeyRange& range, const Key& key) noexcept;

// The smallest key of `type` greater than `key`, or nullopt when there is none (the largest
// bigint, the all-ones uuid). Text keys never contain NUL, so the successor of "k" is "k\x01".
std::optional<Key> key_successor(KeyType type, const Key& key);
// The half-open range holding exactly one key: [key, successor), unbounded above when there
// is no successor. Lets the migration engine treat a list-map point like a range.
KeyRange point_range(KeyType type, const Key& key);
bool ranges_overlap(const KeyRange& a, const KeyRange& b) noexcept;

}  // namespace shardctl::routing
