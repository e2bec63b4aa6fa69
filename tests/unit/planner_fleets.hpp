// Synthetic fleets for the planner's unit and property tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/planner.hpp"

namespace planner_test {

using namespace shardctl::planner;
using shardctl::routing::Key;
using shardctl::routing::KeyRange;

// "s" + number, built by appending (g++ 12 -O3 warns falsely on `"lit" + std::string`).
inline std::string name(int i) {
  std::string n = "s";
  n += std::to_string(i);
  return n;
}

inline Shard shard(std::string name, ShardStatus status = ShardStatus::online) {
  Shard s;
  s.name = std::move(name);
  s.status = status;
  return s;
}

// A bigint range mapping [low, high) of `bytes` split into `slices` equal slices.
inline Mapping range_mapping(std::string map, std::int64_t low, std::int64_t high, std::string on, std::int64_t bytes,
                             int slices = 0, double load = 0) {
  Mapping m;
  m.map = std::move(map);
  m.range = {Key{low}, Key{high}};
  m.shard = std::move(on);
  m.bytes = bytes;
  m.rows = bytes / 100;
  m.load = load;
  for (int i = 0; i < slices; ++i) {
    Slice s;
    s.low = Key{low + (high - low) * i / slices};
    s.bytes = bytes / slices;
    s.rows = m.rows / slices;
    s.load = load / slices;
    m.slices.push_back(s);
  }
  return m;
}

// `shards` shards named s0.., map "m" with `per_shard` mappings of `bytes` each on each shard
// (keys 1000 apart), each with `slices` histogram slices.
inline Fleet even_fleet(int shards, int per_shard, std::int64_t bytes, int slices = 0) {
  Fleet f;
  f.maps.push_back({"m", shardctl::routing::MapKind::range, shardctl::routing::KeyType::int8});
  for (int s = 0; s < shards; ++s) f.shards.push_back(shard(name(s)));
  std::int64_t key = 0;
  for (int s = 0; s < shards; ++s)
    for (int i = 0; i < per_shard; ++i, key += 1000)
      f.mappings.push_back(range_mapping("m", key, key + 1000, name(s), bytes, slices));
  return f;
}

inline std::int64_t bytes_on(const Plan& p, const std::string& shard) {
  for (const auto& b : p.shards)
    if (b.shard == shard) return b.bytes_after;
  return -1;
}

}  // namespace planner_test
