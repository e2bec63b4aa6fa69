#include "drift/compare.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/words.hpp"
#include "digest/sha256.hpp"

namespace shardctl::drift {

namespace {

bool key_matches(const std::string& key, const std::vector<std::string>& patterns) {
  std::string name = name_of(key);
  for (const auto& p : patterns)
    if (fnmatch(p.c_str(), key.c_str(), 0) == 0 || fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace

bool ignored(const Object& object, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return false;
  return key_matches(object.key, patterns) || (!object.parent.empty() && key_matches(object.parent, patterns));
}

std::vector<Object> without_ignored(std::vector<Object> objects, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return objects;
  objects.erase(std::remove_if(objects.begin(), objects.end(), [&](const Object& o) { return ignored(o, patterns); }),
                objects.end());
  return objects;
}

namespace {

// Each object key, with each shard's object of that key (nullptr: the shard lacks it).
using Holdings = std::map<std::string, std::vector<const Object*>>;

std::optional<std::size_t> reference_index(const std::vector<Snapshot>& snapshots, const std::optional<std::string>& reference) {
  if (!reference) return std::nullopt;
  std::optional<std::size_t> ref;
  for (std::size_t i = 0; i < snapshots.size(); ++i)
    if (snapshots[i].shard == *reference) ref = i;
  if (!ref) throw internal_error("reference shard " + *reference + " has no snapshot");
  return ref;
}

Holdings holdings_by_key(const std::vector<Snapshot>& snapshots) {
  Holdings out;
  for (std::size_t i = 0; i < snapshots.size(); ++i)
    for (const auto& o : snapshots[i].objects) {
      auto& slot = out.try_emplace(o.key, snapshots.size(), nullptr).first->second;
      slot[i] = &o;
    }
  return out;
}

// The variant most shards hold (absence counts as a variant); a tie goes to the variant of the
// earliest shard.
const Object* majority(const std::vector<const Object*>& held) {
  // Variants in order of first appearance (usually one or two), each with its count.
  std::vector<std::pair<const Object*, std::size_t>> variants;
  for (const Object* v : held) {
    auto same = [&](const auto& e) { return (!e.first && !v) || (e.first && v && e.first->definition == v->definition); };
    auto it = std::find_if(variants.begin(), variants.end(), same);
    if (it == variants.end()) variants.emplace_back(v, 1);
    else ++it->second;
  }
  const Object* expected = nullptr;
  std::size_t best_count = 0;
  for (const auto& [v, count] : variants)
    if (count > best_count) {
      best_count = count;
      expected = v;
    }
  return expected;
}

// How a shard's object differs from the expected one, or nullopt when it does not.
std::optional<Difference> difference(const std::string& key, const Object* expected, const Object* actual) {
  if (!expected && !actual) return std::nullopt;
  if (expected && actual && expected->definition == actual->definition) return std::nullopt;
  Difference d;
  d.key = key;
  if (!actual) {
    d.change = Change::missing;
    d.expected = expected->definition;
  } else if (!expected) {
    d.change = Change::extra;
    d.actual = actual->definition;
  } else {
    d.change = Change::different;
    d.expected = expected->definition;
    d.actual = actual->definition;
  }
  return d;
}

// A table missing (or extra) on a shard stands for its columns, indexes and the rest: those
// are left out of its differences.
void fold_children(const std::vector<Snapshot>& snapshots, std::vector<ShardDrift>& drifts) {
  std::map<std::string, std::string> parent_of;
  for (const auto& s : snapshots)
    for (const auto& o : s.objects)
      if (!o.parent.empty()) parent_of.emplace(o.key, o.parent);
  for (auto& s : drifts) {
    std::set<std::pair<std::string, Change>> whole;
    for (const auto& d : s.differences)
      if (d.change != Change::different) whole.emplace(d.key, d.change);
    if (whole.empty()) continue;
    std::erase_if(s.differences, [&](const Difference& d) {
      auto it = parent_of.find(d.key);
      return d.change != Change::different && it != parent_of.end() && whole.count({it->second, d.change});
    });
  }
}

}  // namespace

std::vector<ShardDrift> compare(const std::vector<Snapshot>& snapshots, const std::optional<std::string>& reference) {
  auto ref = reference_index(snapshots, reference);
  std::vector<ShardDrift> out(snapshots.size());
  for (std::size_t i = 0; i < snapshots.size(); ++i) out[i].shard = snapshots[i].shard;
  for (const auto& [key, held] : holdings_by_key(snapshots)) {
    const Object* expected = ref ? held[*ref] : majority(held);
    for (std::size_t i = 0; i < snapshots.size(); ++i)
      if (auto d = difference(key, expected, held[i])) out[i].differences.push_back(std::move(*d));
  }
  fold_children(snapshots, out);
  return out;
}

std::string fingerprint(const std::vector<Object>& objects) {
  digest::Sha256 h;
  for (const auto& o : objects) {
    h.update(o.key);
    h.update(std::string_view("\t", 1));
    h.update(o.definition);
    h.update(std::string_view("\n", 1));
  }
  return h.hex_digest();
}

}  // namespace shardctl::drift
