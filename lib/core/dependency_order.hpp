// Tables (or anything named) ordered so each comes after those it references: the one
// topological sort behind shardio::fk_order (the shard's foreign keys) and refdata's sync order.
// Pure code.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace shardctl {

// `names` parents first; `references` holds (child, parent) pairs, self references and pairs
// naming something outside `names` ignored. Ties keep the input order. A cycle is a usage Error,
// "foreign keys among the WHAT form a cycle at NAME".
inline std::vector<std::string> parents_first(const std::vector<std::string>& names,
                                              const std::vector<std::pair<std::string, std::string>>& references,
                                              std::string_view what) {
  auto known = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  std::map<std::string, std::vector<std::string>> parents;
  for (const auto& [child, parent] : references)
    if (child != parent && known(child) && known(parent)) parents[child].push_back(parent);
  std::vector<std::string> order;
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::function<void(const std::string&)> visit = [&](const std::string& n) {
    if (state[n] == 2) return;
    if (state[n] == 1) throw usage_error("foreign keys among the " + std::string(what) + " form a cycle at " + n);
    state[n] = 1;
    for (const auto& p : parents[n]) visit(p);
    state[n] = 2;
    order.push_back(n);
  };
  for (const auto& n : names) visit(n);
  return order;
}

}  // namespace shardctl
