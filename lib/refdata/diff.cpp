#include "refdata/diff.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::refdata {

ChunkDigest total(const ChunkDigests& chunks) {
  std::string sum = "0:0";  // "COUNT:SUM", as shardio adds value digests
  for (const auto& [chunk, d] : chunks) sum = shardio::add_value_digests(sum, std::to_string(d.rows) + ":" + d.sum);
  auto colon = sum.find(':');
  return {std::stoll(sum.substr(0, colon)), sum.substr(colon + 1)};
}

std::vector<std::int64_t> differing_chunks(const ChunkDigests& a, const ChunkDigests& b) {
  std::vector<std::int64_t> out;
  for (const auto& [chunk, d] : a) {
    auto it = b.find(chunk);
    if (it == b.end() || !(it->second == d)) out.push_back(chunk);
  }
  for (const auto& [chunk, d] : b)
    if (!a.count(chunk)) out.push_back(chunk);
  std::sort(out.begin(), out.end());
  return out;
}

RowDiff classify(const std::vector<RowHash>& source, const std::vector<RowHash>& copy, bool by_row) {
  RowDiff out;
  if (by_row) {
    std::map<std::string, std::int64_t> count;  // row hash -> source rows minus copy rows
    for (const auto& r : source) ++count[r.hash];
    for (const auto& r : copy) --count[r.hash];
    for (const auto& [hash, n] : count) {
      for (std::int64_t i = 0; i < n; ++i) out.missing.push_back(hash);
      for (std::int64_t i = 0; i < -n; ++i) out.extra.push_back(hash);
    }
    return out;
  }
  std::map<std::string, std::string> in_source;
  for (const auto& r : source) in_source[r.key] = r.hash;
  std::map<std::string, std::string> in_copy;
  for (const auto& r : copy) in_copy[r.key] = r.hash;
  for (const auto& [key, hash] : in_source) {
    auto it = in_copy.find(key);
    if (it == in_copy.end()) out.missing.push_back(key);
    else if (it->second != hash) out.changed.push_back(key);
  }
  for (const auto& [key, hash] : in_copy)
    if (!in_source.count(key)) out.extra.push_back(key);
  return out;
}

Majority majority(const std::vector<ChunkDigest>& copies) {
  if (copies.empty()) throw internal_error("a majority of no copies");
  Majority out;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    auto same = std::find_if(out.groups.begin(), out.groups.end(), [&](const auto& g) { return copies[g.front()] == copies[i]; });
    if (same == out.groups.end()) out.groups.push_back({i});
    else same->push_back(i);
  }
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  out.tie = out.groups.size() > 1 && out.groups[0].size() == out.groups[1].size();
  return out;
}

}  // namespace shardctl::refdata
