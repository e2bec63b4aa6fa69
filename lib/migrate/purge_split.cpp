#include "migrate/purge_split.hpp"

#include <algorithm>

namespace shardctl::migrate {

std::size_t purge_split_at(const std::vector<PurgeStepSize>& steps, double digest_cost) {
  double all = 0;
  for (const auto& s : steps) all += s.rows;
  std::size_t best = steps.size();
  double best_cost = all;  // unsplit: every DELETE on one session, the digests beside
  double first = 0;
  for (std::size_t k = 1; k < steps.size(); ++k) {
    first += steps[k - 1].rows;
    if (!steps[k].starts_table) continue;
    double cost = std::max(first, digest_cost * all + (all - first));
    if (cost < best_cost) best = k, best_cost = cost;
  }
  return best;
}

}  // namespace shardctl::migrate
