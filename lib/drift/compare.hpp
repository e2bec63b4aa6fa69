// Comparing shards' structures: pure code, no database. Each object of each shard is held
// against the expected one: the named reference shard's, or the majority's (per object: the
// definition, or absence, most shards have; a tie goes to the variant of the shard first in
// name order).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "drift/object.hpp"

namespace shardctl::drift {

struct Snapshot {
  std::string shard;
  std::vector<Object> objects;  // sorted by key, keys unique
};

enum class Change { missing, extra, different };
inline constexpr auto change_words =
    words<Change>({{Change::missing, "missing"}, {Change::extra, "extra"}, {Change::different, "different"}}).otherwise("different");
constexpr const auto& words_of(Change) noexcept { return change_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct Difference {
  Change change;
  std::string key;
  std::string expected;  // the reference's / majority's definition; empty when extra
  std::string actual;    // this shard's; empty when missing
};

struct ShardDrift {
  std::string shard;
  std::vector<Difference> differences;  // sorted by key
};

// --ignore patterns: shell globs (fnmatch, `*` also matches dots) matched against an object's
// key ("index:public.orders_old") and against its name alone ("public.orders_old"). An object
// whose parent table or view is ignored is ignored with it.
bool ignored(const Object& object, const std::vector<std::string>& patterns);
std::vector<Object> without_ignored(std::vector<Object> objects, const std::vector<std::string>& patterns);

// One entry per snapshot, in snapshot order. With a reference, it must be one of the snapshots
// (its entry has no differences). Children (columns, indexes, constraints, triggers) of a
// table that is itself missing or extra on a shard are not listed again.
std::vector<ShardDrift> compare(const std::vector<Snapshot>& snapshots, const std::optional<std::string>& reference);

// SHA-256 over a shard's objects (key and definition): equal fingerprints, equal structure.
std::string fingerprint(const std::vector<Object>& objects);

}  // namespace shardctl::drift
