// apply_plan(): the layout a plan predicts, computed from the plan's own steps (not from the
// planner's bookkeeping), so that tests can hold plan() to its prediction.
#include <unordered_map>

#include "core/error.hpp"
#include "planner/planner.hpp"
#include "planner/slices.hpp"

namespace shardctl::planner {

namespace {

// The keys of `inner` lie in `outer`, with `at` strictly inside `outer` on the given side.
bool split_matches(const Mapping& m, const Step& s) {
  if (!s.at || !routing::range_contains(m.range, *s.at)) return false;
  if (m.range.low && routing::compare_keys(*m.range.low, *s.at) == 0) return false;
  if (s.move_upper) return detail::same_bound(s.range.low, s.at) && detail::same_bound(s.range.high, m.range.high);
  return detail::same_bound(s.range.low, m.range.low) && detail::same_bound(s.range.high, s.at);
}

}  // namespace

Fleet apply_plan(const Fleet& fleet, const Plan& plan) {
  Fleet out = fleet;
  // Mappings by (map, shard): a step only ever looks among the giving shard's mappings.
  std::unordered_map<std::string, std::vector<std::size_t>> by_place;
  auto place = [](const std::string& map, const std::string& shard) { return map + '\n' + shard; };
  for (std::size_t i = 0; i < out.mappings.size(); ++i) by_place[place(out.mappings[i].map, out.mappings[i].shard)].push_back(i);

  for (std::size_t n = 0; n < plan.steps.size(); ++n) {
    const Step& s = plan.steps[n];
    auto& candidates = by_place[place(s.map, s.from)];
    std::size_t found = out.mappings.size();
    std::size_t slot = 0;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const auto& m = out.mappings[candidates[k]];
      bool match = s.kind == StepKind::split ? split_matches(m, s) : detail::same_range(m.range, s.range);
      if (match) {
        found = candidates[k];
        slot = k;
        break;
      }
    }
    if (found == out.mappings.size())
      throw data_error("plan step " + std::to_string(n + 1) + " (" + std::string(to_text(s.kind)) + " " +
                       routing::format_range(s.range) + " of map " + s.map + ") names no mapping on shard " + s.from);
    if (s.kind == StepKind::merge)
      throw data_error("plan step " + std::to_string(n + 1) + ": merge steps are not produced by this planner");
    auto& target = by_place[place(s.map, s.to)];
    if (s.kind == StepKind::move) {
      out.mappings[found].shard = s.to;
      candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(slot));
      target.push_back(found);
      continue;
    }
    Mapping& stays = out.mappings[found];
    Mapping moves = stays;
    moves.shard = s.to;
    moves.range = s.range;
    moves.rows = s.rows;
    moves.bytes = s.bytes;
    moves.load = s.load;
    stays.rows -= s.rows;
    stays.bytes -= s.bytes;
    stays.load -= s.load;
    if (s.move_upper) stays.range.high = s.at;
    else stays.range.low = s.at;
    std::vector<Slice> lower, upper;
    for (auto& slice : stays.slices)
      (routing::compare_keys(slice.low, *s.at) < 0 ? lower : upper).push_back(std::move(slice));
    stays.slices = s.move_upper ? std::move(lower) : std::move(upper);
    moves.slices = s.move_upper ? std::move(upper) : std::move(lower);
    out.mappings.push_back(std::move(moves));
    target.push_back(out.mappings.size() - 1);
  }
  return out;
}

}  // namespace shardctl::planner
