#include "drift/compare.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "digest/sha256.hpp"

namespace shardctl::drift {

const char* change_name(Change c) noexcept {
  switch (c) {
    case Change::missing: return "missing";
    case Change::extra: return "extra";
    case Change::different: return "different";
  }
  return "different";
}

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

std::vector<ShardDrift> compare(const std::vector<Snapshot>& snapshots, const std::optional<std::string>& reference) {
  const std::size_t n = snapshots.size();
  std::optional<std::size_t> ref;
  if (reference) {
    for (std::size_t i = 0; i < n; ++i)
      if (snapshots[i].shard == *reference) ref = i;
    if (!ref) throw internal_error("reference shard " + *reference + " has no snapshot");
  }
  // Per key, each shard's object (nullptr: the shard lacks it).
  std::map<std::string, std::vector<const Object*>> by_key;
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& o : snapshots[i].objects) {
      auto& slot = by_key.try_emplace(o.key, n, nullptr).first->second;
      slot[i] = &o;
    }

  std::vector<ShardDrift> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i].shard = snapshots[i].shard;
  for (const auto& [key, held] : by_key) {
    // The expected variant: the reference's, or the one most shards hold (absence counts as a
    // variant); a tie goes to the variant of the earliest shard.
    const Object* expected = nullptr;
    if (ref) {
      expected = held[*ref];
    } else {
      // Variants in order of first appearance (usually one or two), each with its count.
      std::vector<std::pair<const Object*, std::size_t>> variants;
      for (std::size_t i = 0; i < n; ++i) {
        const Object* v = held[i];
        auto same = [&](const auto& e) { return (!e.first && !v) || (e.first && v && e.first->definition == v->definition); };
        auto it = std::find_if(variants.begin(), variants.end(), same);
        if (it == variants.end()) variants.emplace_back(v, 1);
        else ++it->second;
      }
      std::size_t best_count = 0;
      for (const auto& [v, count] : variants)
        if (count > best_count) {
          best_count = count;
          expected = v;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Object* actual = held[i];
      if (!expected && !actual) continue;
      if (expected && actual && expected->definition == actual->definition) continue;
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
      out[i].differences.push_back(std::move(d));
    }
  }

  // A table missing (or extra) on a shard stands for its columns, indexes and the rest.
  std::map<std::string, std::string> parent_of;
  for (const auto& s : snapshots)
    for (const auto& o : s.objects)
      if (!o.parent.empty()) parent_of.emplace(o.key, o.parent);
  for (auto& s : out) {
    std::set<std::pair<std::string, Change>> whole;
    for (const auto& d : s.differences)
      if (d.change != Change::different) whole.emplace(d.key, d.change);
    if (whole.empty()) continue;
    std::erase_if(s.differences, [&](const Difference& d) {
      auto it = parent_of.find(d.key);
      return d.change != Change::different && it != parent_of.end() && whole.count({it->second, d.change});
    });
  }
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
