// plan(): targets from weights and capacities, hot keys pinned, aims that move only what lies
// outside --threshold (the fullest givers lowered to one level, the emptiest receivers raised to
// another), then a greedy loop that pairs the shard furthest above its aim with the one furthest
// below and moves the largest unit (a whole mapping, or one cut at a histogram boundary) that
// fits the smaller of the two gaps; the step that brings a shard into the band takes the
// smallest piece that does, and the loop stops once every shard is inside it.
// Every key range moves at most once, so no later step can undo an earlier one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/planner.hpp"
#include "planner/slices.hpp"

namespace shardctl::planner {

std::vector<Usage> shard_usage(const Fleet& fleet) {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<Usage> out(fleet.shards.size());
  for (std::size_t i = 0; i < fleet.shards.size(); ++i) {
    index.emplace(fleet.shards[i].name, i);
    out[i] = {fleet.shards[i].fixed_bytes, fleet.shards[i].fixed_load};
  }
  for (const auto& m : fleet.mappings) {
    auto it = index.find(m.shard);
    if (it == index.end()) throw data_error("a mapping of map " + m.map + " names unknown shard " + m.shard);
    out[it->second].bytes += m.bytes;
    out[it->second].load += m.load;
  }
  return out;
}

namespace {

using routing::Key;
using routing::KeyRange;

// The objective as one number per (bytes, load): bytes, load, or their mean with load scaled
// to bytes by the fleet's totals (so "both" weighs a shard's share of each equally).
struct Measure {
  double per_byte = 1;
  double per_load = 0;
  double operator()(std::int64_t bytes, double load) const {
    return per_byte * static_cast<double>(bytes) + per_load * load;
  }
};

// A mapping's part that has not moved yet: slices [a, b) of it (all of it when not splittable).
struct Unit {
  const Mapping* m = nullptr;
  std::size_t shard = 0;
  std::size_t a = 0, b = 0;
  std::int64_t rows = 0, bytes = 0;
  double load = 0;
  double w = 0;  // objective of the remainder
  bool splittable = false;
  bool in_set = false;
  std::optional<std::size_t> keep;  // a pinned hot key's slice: never moves
  bool keep_whole = false;          // a pinned hot point mapping: never moves
  std::shared_ptr<detail::Prefix> prefix;
};

struct ShardState {
  const Shard* s = nullptr;
  bool online = false, excluded = false, drained = false, pinned = false;
  bool gives = false, receives = false;
  std::int64_t bytes = 0;
  double load = 0;
  double target = 0;
  double aim = 0;  // where the loop steers it: its target, or a level that moves fewer bytes
  std::int64_t target_bytes = 0;
  std::set<std::pair<double, std::size_t>> units;  // movable units by objective
  std::optional<std::size_t> last_step;
  bool stuck = false;
  std::vector<std::size_t> keepers;  // units holding a pinned hot key's slice
};

struct Piece {
  std::size_t unit = 0;
  bool whole = true;
  std::size_t cut = 0;  // slice index of the cut
  bool upper = true;    // the side at and above the cut moves
  std::int64_t rows = 0, bytes = 0;
  double load = 0, w = 0;
};

// Distributes `total` over `members` by weight, no member above its cap (0: none). What no
// member can take for the caps stays spread by weight: the fleet is over capacity.
std::vector<double> water_fill(double total, const std::vector<std::size_t>& members, const std::vector<double>& weight,
                               const std::vector<double>& cap, std::size_t n) {
  std::vector<double> out(n, 0.0);
  std::vector<std::size_t> active = members;
  double remaining = total;
  while (!active.empty()) {
    double sum_w = 0;
    for (auto i : active) sum_w += weight[i];
    if (sum_w <= 0) break;
    std::vector<std::size_t> next;
    bool clamped = false;
    for (auto i : active) {
      double share = remaining * weight[i] / sum_w;
      if (cap[i] > 0 && share > cap[i]) {
        out[i] = cap[i];
        clamped = true;
      } else {
        next.push_back(i);
      }
    }
    if (!clamped) {
      for (auto i : active) out[i] = remaining * weight[i] / sum_w;
      return out;
    }
    for (auto i : active)
      if (cap[i] > 0 && out[i] == cap[i]) remaining -= cap[i];
    active = std::move(next);
  }
  if (remaining > 0) {  // over capacity: the rest by weight over everyone
    double sum_w = 0;
    for (auto i : members) sum_w += weight[i];
    if (sum_w > 0)
      for (auto i : members) out[i] += remaining * weight[i] / sum_w;
  }
  return out;
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

class Planner {
 public:
  Planner(const Fleet& fleet, const Options& options) : fleet_(fleet), opt_(options) {}

  Plan run() {
    validate_and_index();
    build_units();
    settle_targets();
    compute_aims();
    const auto value_before = values();
    plan_.imbalance_before = imbalance(value_before);
    greedy();
    finish(value_before);
    return std::move(plan_);
  }

 private:
  const Fleet& fleet_;
  const Options& opt_;
  Plan plan_;
  Measure measure_;
  std::vector<ShardState> shards_;
  std::unordered_map<std::string, std::size_t> shard_index_;
  std::unordered_map<std::string, routing::KeyType> map_type_;
  std::vector<Unit> units_;
  std::int64_t moved_bytes_ = 0;
  std::set<std::pair<double, std::size_t>> donors_, receivers_;
  std::vector<double> donor_key_, receiver_key_;
  bool dropped_slices_noted_ = false;
  bool aiming_ = false;  // steering by the aims, not yet by the targets
  struct HotKey {
    std::size_t unit;
    std::optional<std::size_t> slice;
    Key key;
    std::int64_t bytes;
    double w;
  };
  std::vector<HotKey> hot_;
  std::vector<double> fair_target_;  // by weight and capacity, before hot keys are pinned

  std::size_t shard_of(const std::string& name, const char* what) const {
    auto it = shard_index_.find(name);
    if (it == shard_index_.end()) throw usage_error(std::string(what) + " names unknown shard " + name);
    return it->second;
  }

  void validate_and_index() {
    validate_options();
    index_shards();
    mark_drained_and_excluded();
    choose_measure();
  }

  void validate_options() {
    for (const auto& m : fleet_.maps) map_type_.emplace(m.name, m.bound_type);
    if (opt_.map && !map_type_.count(*opt_.map)) throw usage_error("unknown map " + *opt_.map);
    if (opt_.threshold < 0) throw usage_error("--threshold must not be negative");
    if (opt_.min_improvement < 0 || opt_.min_improvement > 1)
      throw usage_error("--min-improvement must be between 0 and 1", "1 accepts only steps that fit the gap exactly");
    if (opt_.max_moves && *opt_.max_moves < 0) throw usage_error("--max-moves must not be negative");
    if (opt_.max_bytes && *opt_.max_bytes < 0) throw usage_error("--max-bytes must not be negative");
    if (opt_.batch_bytes <= 0 || opt_.copy_bytes_per_second <= 0)
      throw usage_error("the batch size and copy rate must be positive");
  }

  void index_shards() {
    shards_.resize(fleet_.shards.size());
    for (std::size_t i = 0; i < fleet_.shards.size(); ++i) {
      const auto& s = fleet_.shards[i];
      if (!shard_index_.emplace(s.name, i).second) throw data_error("shard " + s.name + " appears twice in the fleet");
      if (s.weight < 0) throw data_error("shard " + s.name + " has a negative weight");
      shards_[i].s = &s;
      shards_[i].online = s.status == ShardStatus::online;
      shards_[i].bytes = s.fixed_bytes;
      shards_[i].load = s.fixed_load;
    }
  }

  // --exclude-shard and --drain, then who gives and who receives.
  void mark_drained_and_excluded() {
    for (const auto& name : opt_.exclude_shards) shards_[shard_of(name, "--exclude-shard")].excluded = true;
    for (const auto& name : opt_.drain_shards) {
      auto i = shard_of(name, "--drain");
      if (shards_[i].excluded) throw usage_error("shard " + name + " is both drained and excluded");
      if (shards_[i].s->status == ShardStatus::offline)
        throw usage_error("cannot drain offline shard " + name, "its data cannot be read; bring it online or readonly first");
      shards_[i].drained = true;
    }
    for (auto& st : shards_) {
      st.gives = !st.excluded && (st.online || st.drained);
      st.receives = st.online && !st.excluded && !st.drained;
    }
  }

  // The objective as one number (see Measure), scaled by the fleet's totals.
  void choose_measure() {
    double total_bytes = 0, total_load = 0;
    for (const auto& st : shards_) total_bytes += static_cast<double>(st.s->fixed_bytes), total_load += st.s->fixed_load;
    for (const auto& m : fleet_.mappings) total_bytes += static_cast<double>(m.bytes), total_load += m.load;
    switch (opt_.objective) {
      case Objective::size: measure_ = {1, 0}; break;
      case Objective::load:
        measure_ = {0, 1};
        if (total_load <= 0) plan_.notes.push_back("no load was measured: the load objective has nothing to balance");
        break;
      case Objective::both:
        measure_ = total_load > 0 ? Measure{0.5, 0.5 * total_bytes / total_load} : Measure{1, 0};
        if (total_load <= 0) plan_.notes.push_back("no load was measured: balancing size only");
        break;
    }
    plan_.objective = opt_.objective;
  }

  void build_units() {
    units_.reserve(fleet_.mappings.size());
    for (const auto& m : fleet_.mappings) {
      auto type = map_type_.find(m.map);
      if (type == map_type_.end()) throw data_error("a mapping names unknown map " + m.map);
      std::size_t si = shard_of(m.shard, "a mapping");
      auto& st = shards_[si];
      st.bytes += m.bytes;
      st.load += m.load;
      Unit u;
      u.m = &m;
      u.shard = si;
      u.rows = m.rows;
      u.bytes = m.bytes;
      u.load = m.load;
      u.w = measure_(m.bytes, m.load);
      u.b = m.slices.size();
      u.splittable = detail::slices_usable(m, type->second);
      if (!u.splittable && m.slices.size() >= 2 && !dropped_slices_noted_) {
        dropped_slices_noted_ = true;
        plan_.notes.push_back("map " + m.map + ": a mapping's histogram is out of order or outside its range; it moves whole");
      }
      bool in_scope = !opt_.map || *opt_.map == m.map;
      bool movable = in_scope && !m.held && st.gives;
      if (movable) {
        u.in_set = true;
        st.units.emplace(u.w, units_.size());
      }
      units_.push_back(std::move(u));
    }
  }

  double value(std::size_t i) const { return measure_(shards_[i].bytes, shards_[i].load); }
  std::vector<double> values() const {
    std::vector<double> v(shards_.size());
    for (std::size_t i = 0; i < shards_.size(); ++i) v[i] = value(i);
    return v;
  }

  double movable_w(std::size_t i) const {
    double sum = 0;
    for (const auto& [w, u] : shards_[i].units) sum += units_[u].w - kept_w(units_[u]);
    return sum;
  }
  std::int64_t movable_bytes(std::size_t i) const {
    std::int64_t sum = 0;
    for (const auto& [w, u] : shards_[i].units) sum += units_[u].bytes - kept_bytes(units_[u]);
    return sum;
  }
  const detail::Prefix& prefix(Unit& u) {
    if (!u.prefix) u.prefix = std::make_shared<detail::Prefix>(detail::prefix_of(*u.m));
    return *u.prefix;
  }
  std::int64_t kept_bytes(const Unit& u) const {
    if (u.keep_whole) return u.bytes;
    if (!u.keep) return 0;
    return u.prefix->bytes[*u.keep + 1] - u.prefix->bytes[*u.keep];
  }
  double kept_w(const Unit& u) const {
    if (u.keep_whole) return u.w;
    if (!u.keep) return 0;
    const auto& p = *u.prefix;
    return measure_(p.bytes[*u.keep + 1] - p.bytes[*u.keep], p.load[*u.keep + 1] - p.load[*u.keep]);
  }

  // The balancing shards share what they hold plus what drained and pinned shards give away.
  void compute_targets() {
    std::size_t n = shards_.size();
    std::vector<std::size_t> members;
    std::vector<double> weight(n), cap(n, 0.0), none(n, 0.0);
    double pool_bytes = 0, pool_load = 0;
    for (std::size_t i = 0; i < n; ++i) {
      auto& st = shards_[i];
      weight[i] = st.s->weight;
      if (st.s->capacity_bytes > 0) cap[i] = static_cast<double>(st.s->capacity_bytes);
      if (st.receives && !st.pinned) {
        members.push_back(i);
        pool_bytes += static_cast<double>(st.bytes);
        pool_load += st.load;
      } else if (st.drained || st.pinned) {
        std::int64_t mb = movable_bytes(i);
        double ml = 0;
        for (const auto& [w, u] : st.units) ml += units_[u].load - (units_[u].keep_whole ? units_[u].load : kept_load(units_[u]));
        pool_bytes += static_cast<double>(mb);
        pool_load += ml;
        st.target_bytes = st.bytes - mb;
        st.target = measure_(st.bytes - mb, st.load - ml);
      } else {
        st.target_bytes = st.bytes;
        st.target = value(i);
      }
    }
    auto tb = water_fill(pool_bytes, members, weight, cap, n);
    auto tl = water_fill(pool_load, members, weight, none, n);
    for (auto i : members) {
      shards_[i].target_bytes = std::llround(tb[i]);
      shards_[i].target = measure_.per_byte * tb[i] + measure_.per_load * tl[i];
    }
    for (auto& st : shards_) st.aim = st.target;
  }

  // Balanced means within --threshold of the target, so only what lies outside that band has to
  // move: X, the larger of what sits above the band (and what drained and pinned shards must
  // give) and what is missing below it. Filling every shard to its target would move more; the
  // aims move X and spend it where balance gains most: the fullest givers come down to one
  // common level, the emptiest receivers go up to another (water levels, relative to target).
  // The loop steers by the aims and stops as soon as every shard is within the band; if
  // granularity leaves one outside, it falls back to the targets for the last steps.
  void compute_aims() {
    const double t = opt_.threshold;
    if (t <= 0) return;
    std::vector<std::size_t> bal;
    double out = 0, in = 0, forced_out = 0;
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      const auto& st = shards_[i];
      if (forced(i)) {
        forced_out += movable_w(i);
        continue;
      }
      if (!st.receives || st.pinned || st.target <= 0) continue;
      bal.push_back(i);
      out += std::max(0.0, value(i) - (1 + t) * st.target);
      in += std::max(0.0, (1 - t) * st.target - value(i));
    }
    const double x = std::max(out + forced_out, in);
    if (x <= 0 || bal.empty()) return;
    auto above = [&](double level) {
      double sum = 0;
      for (auto i : bal) sum += std::max(0.0, value(i) - level * shards_[i].target);
      return sum;
    };
    auto below = [&](double level) {
      double sum = 0;
      for (auto i : bal) sum += std::max(0.0, level * shards_[i].target - value(i));
      return sum;
    };
    double top = 0;
    for (auto i : bal) top = std::max(top, value(i) / shards_[i].target);
    double down = top;  // givers' level: above(down) == x - forced_out
    if (x - forced_out > 0) {
      double lo = 0, hi = top;
      for (int k = 0; k < 100; ++k) {
        double mid = (lo + hi) / 2;
        (above(mid) > x - forced_out ? lo : hi) = mid;
      }
      down = hi;
    }
    double lo = 0, hi = 1;  // receivers' level: below(up) == x
    if (below(hi) < x) return;  // more to place than the receivers miss: keep the targets
    for (int k = 0; k < 100; ++k) {
      double mid = (lo + hi) / 2;
      (below(mid) < x ? lo : hi) = mid;
    }
    double up = hi;
    if (up > down) return;
    for (auto i : bal) {
      auto& st = shards_[i];
      if (value(i) > down * st.target) st.aim = down * st.target;
      else if (value(i) < up * st.target) st.aim = up * st.target;
      else st.aim = value(i);
    }
    aiming_ = true;
  }

  // Back to the targets: the aims are reached but a shard is still outside the band.
  void stop_aiming() {
    aiming_ = false;
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      unindex_shard(i);
      shards_[i].aim = shards_[i].target;
      index_shard(i);
    }
  }
  double kept_load(const Unit& u) const {
    if (!u.keep) return 0;
    return u.prefix->load[*u.keep + 1] - u.prefix->load[*u.keep];
  }

  // The target a key must exceed to count as too big to move: its shard's, or the mean one.
  double key_limit(std::size_t shard) const {
    const auto& st = shards_[shard];
    if (st.receives && !st.pinned) return st.target;
    double pool = 0, weights = 0;
    for (const auto& o : shards_)
      if (o.receives && !o.pinned) pool += o.target, weights += o.s->weight;
    return weights > 0 ? pool / weights * st.s->weight : 0;
  }

  // Hot keys bigger than a shard's target stay where they are and their shard gives everything
  // else away (isolated in place: moving the rest is cheaper than moving the key, and a key that
  // never moves is never bounced). One per shard, biggest first, while another shard receives.
  void settle_targets() {
    find_hot_keys();
    std::sort(hot_.begin(), hot_.end(), [](const HotKey& x, const HotKey& y) { return x.w > y.w; });
    compute_targets();
    for (const auto& st : shards_) fair_target_.push_back(st.target);
    while (pin_hot_key()) {
    }
    for (const auto& h : hot_) {
      const auto& u = units_[h.unit];
      if (h.w > key_limit(u.shard) && h.w > 0)
        plan_.unsplittable.push_back({u.m->map, h.key, fleet_.shards[u.shard].name, h.bytes, false});
    }
  }

  // Point mappings and single-key slices of the mappings in scope.
  void find_hot_keys() {
    for (std::size_t ui = 0; ui < units_.size(); ++ui) {
      auto& u = units_[ui];
      if (opt_.map && *opt_.map != u.m->map) continue;
      if (u.m->is_point) {
        hot_.push_back({ui, std::nullopt, u.m->range.low ? *u.m->range.low : Key{std::int64_t{0}}, u.bytes, u.w});
        continue;
      }
      if (!u.splittable) continue;
      bool any = false;
      for (const auto& s : u.m->slices) any = any || s.single_key;
      if (!any) continue;
      const auto& p = prefix(u);
      for (std::size_t j = 0; j < u.m->slices.size(); ++j)
        if (u.m->slices[j].single_key) {
          std::int64_t b = p.bytes[j + 1] - p.bytes[j];
          hot_.push_back({ui, j, u.m->slices[j].low, b, measure_(b, p.load[j + 1] - p.load[j])});
        }
    }
  }

  // Pins the biggest hot key above its shard's key limit, while two shards still receive, and
  // computes the targets again; false when none is left to pin.
  bool pin_hot_key() {
    std::size_t receivers = 0;
    for (const auto& st : shards_) receivers += st.receives && !st.pinned ? 1 : 0;
    if (receivers < 2) return false;
    for (const auto& h : hot_) {
      auto& u = units_[h.unit];
      auto& st = shards_[u.shard];
      if (!st.receives || st.pinned || !u.in_set || h.w <= key_limit(u.shard)) continue;
      st.pinned = true;
      if (h.slice) {
        u.keep = h.slice;
        st.keepers.push_back(h.unit);
        if (u.b - u.a == 1) remove_unit(h.unit);
      } else {
        u.keep_whole = true;
        remove_unit(h.unit);
      }
      compute_targets();
      return true;
    }
    return false;
  }

  void remove_unit(std::size_t ui) {
    auto& u = units_[ui];
    if (!u.in_set) return;
    shards_[u.shard].units.erase({u.w, ui});
    u.in_set = false;
  }

  bool forced(std::size_t i) const { return (shards_[i].drained || shards_[i].pinned) && !shards_[i].units.empty(); }

  double donor_priority(std::size_t i) const {
    const auto& st = shards_[i];
    double excess = value(i) - st.aim;
    if (forced(i)) return 1e300;  // must give: first
    if (st.aim > 0) return excess / st.aim;
    return excess > 0 ? 1e200 : excess;
  }
  double receiver_priority(std::size_t i) const {
    const auto& st = shards_[i];
    if (st.aim <= 0) return -1e300;
    return (st.aim - value(i)) / st.aim;
  }
  void index_shard(std::size_t i) {
    const auto& st = shards_[i];
    if (st.gives && !st.stuck) {
      donor_key_[i] = donor_priority(i);
      donors_.emplace(donor_key_[i], i);
    }
    if (st.receives && !st.pinned) {
      receiver_key_[i] = receiver_priority(i);
      receivers_.emplace(receiver_key_[i], i);
    }
  }
  void unindex_shard(std::size_t i) {
    donors_.erase({donor_key_[i], i});
    receivers_.erase({receiver_key_[i], i});
  }

  // What a piece may weigh in bytes: the byte budget and the receiver's capacity.
  std::int64_t byte_room(std::size_t r) const {
    std::int64_t room = std::numeric_limits<std::int64_t>::max();
    if (opt_.max_bytes) room = std::min(room, *opt_.max_bytes - moved_bytes_);
    const auto& st = shards_[r];
    if (st.s->capacity_bytes > 0) room = std::min(room, std::max<std::int64_t>(0, st.s->capacity_bytes - st.bytes));
    return room;
  }

  // Among units of about the same size, the coldest (size) or the smallest (load) moves.
  double side_cost(const Unit& u) const {
    switch (opt_.objective) {
      case Objective::size: return u.load;
      case Objective::load: return static_cast<double>(u.bytes);
      case Objective::both: return 0;
    }
    return 0;
  }

  std::optional<Piece> whole_fit(std::size_t d, double amount, std::int64_t room) const {
    const auto& set = shards_[d].units;
    auto it = set.upper_bound({amount, std::numeric_limits<std::size_t>::max()});
    std::optional<Piece> best;
    double best_cost = 0;
    bool must = forced(d);
    int looked = 0, eligible = 0;
    while (it != set.begin() && ++looked < 256 && eligible < 8) {
      --it;
      const auto& u = units_[it->second];
      if (u.keep || u.keep_whole || u.bytes > room || (u.w <= 0 && !must)) continue;
      if (best && u.w < 0.9 * best->w) break;
      ++eligible;
      if (!best || side_cost(u) < best_cost) {
        best = Piece{it->second, true, 0, true, u.rows, u.bytes, u.load, u.w};
        best_cost = side_cost(u);
      }
    }
    return best;
  }

  std::optional<Piece> best_cut(std::size_t ui, double amount, std::int64_t room) {
    auto& u = units_[ui];
    if (!u.splittable || u.b - u.a < 2) return std::nullopt;
    const auto& p = prefix(u);
    std::optional<Piece> best;
    auto consider = [&](std::size_t lo, std::size_t hi, std::size_t cut, bool upper) {
      std::int64_t bytes = p.bytes[hi] - p.bytes[lo];
      double load = p.load[hi] - p.load[lo];
      double w = measure_(bytes, load);
      if (w > amount || bytes > room || w <= 0) return;
      if (best && w <= best->w) return;
      best = Piece{ui, false, cut, upper, p.rows[hi] - p.rows[lo], bytes, load, w};
    };
    for (std::size_t i = u.a + 1; i < u.b; ++i) {
      if (!u.keep || i <= *u.keep) consider(u.a, i, i, false);       // [a, i) moves
      if (!u.keep || i >= *u.keep + 1) consider(i, u.b, i, true);    // [i, b) moves
    }
    return best;
  }

  std::optional<Piece> cut_fit(std::size_t d, double amount, std::int64_t room) {
    const auto& set = shards_[d].units;
    auto it = set.upper_bound({amount, std::numeric_limits<std::size_t>::max()});
    std::optional<Piece> best;
    int looked = 0;
    for (; it != set.end() && looked < 4; ++it) {
      if (!units_[it->second].splittable) continue;
      ++looked;
      auto piece = best_cut(it->second, amount, room);
      if (piece && (!best || piece->w > best->w)) best = piece;
    }
    // A pinned hot key's mapping may weigh less than `amount` and still be cut around the key.
    for (auto ui : shards_[d].keepers)
      if (units_[ui].in_set && units_[ui].w <= amount) {
        auto piece = best_cut(ui, amount, room);
        if (piece && (!best || piece->w > best->w)) best = piece;
      }
    return best;
  }

  // Reduction of sum |objective - target| over the two shards, per twice the weight moved.
  double improvement(std::size_t d, std::size_t r, double x) const {
    double e = value(d) - shards_[d].target, f = shards_[r].target - value(r);
    double before = std::abs(e) + std::abs(f), after = std::abs(e - x) + std::abs(f - x);
    return x > 0 ? (before - after) / (2 * x) : 0;
  }

  // Whether moving `w` from d to r leaves r below where d was, relative to their fair targets,
  // so that the fleet's imbalance (imbalance()) cannot grow. A drained shard gives everything
  // whatever that costs; a shard pinned around a hot key gives its other keys only so: a
  // neighbour as big as the key, moved to an empty shard, made that shard the fullest.
  bool lowers_no_peak(std::size_t d, std::size_t r, double w) const {
    if (shards_[d].drained) return true;
    double fd = fair_target_[d], fr = fair_target_[r];
    return fd > 0 && fr > 0 && (value(r) + w) / fr < value(d) / fd;
  }

  std::optional<Piece> overshoot(std::size_t d, std::size_t r, double amount, std::int64_t room) {
    const auto& set = shards_[d].units;
    auto it = set.upper_bound({amount, std::numeric_limits<std::size_t>::max()});
    bool must = forced(d);
    double vd = value(d), vr = value(r), td = shards_[d].target, tr = shards_[r].target;
    for (int looked = 0; it != set.end() && ++looked < 256; ++it) {
      const auto& u = units_[it->second];
      if (u.keep || u.keep_whole || u.bytes > room) continue;
      if (!must) {
        double gain = improvement(d, r, u.w);
        if (gain <= 1e-12 || gain < opt_.min_improvement) return std::nullopt;  // bigger ones gain less
        // The receiver must end below where the donor was, relative to their targets, so the
        // fleet's max / mean cannot grow.
        if (tr <= 0 || td <= 0 || (vr + u.w) / tr >= vd / td) return std::nullopt;
      } else if (!lowers_no_peak(d, r, u.w)) {
        return std::nullopt;  // bigger ones would end higher still
      }
      return Piece{it->second, true, 0, true, u.rows, u.bytes, u.load, u.w};
    }
    return std::nullopt;
  }

  // The smallest piece of at least `need` and at most `amount`: a whole unit or one cut at a
  // histogram boundary (the part below or above the cut).
  std::optional<Piece> smallest_over(std::size_t d, double need, double amount, std::int64_t room) {
    const auto& set = shards_[d].units;
    std::optional<Piece> best;
    auto better = [&](const Piece& p) { return !best || p.w < best->w; };
    int cut_units = 0, looked = 0;
    for (auto it = set.lower_bound({need, 0}); it != set.end() && ++looked < 256; ++it) {
      auto ui = it->second;
      auto& u = units_[ui];
      if (best && u.w >= best->w && cut_units >= 8) break;
      if (!u.keep && !u.keep_whole && u.w <= amount && u.bytes <= room && u.w > 0) {
        Piece whole{ui, true, 0, true, u.rows, u.bytes, u.load, u.w};
        if (better(whole)) best = whole;
      }
      if (!u.splittable || u.b - u.a < 2 || cut_units >= 8) continue;
      ++cut_units;
      const auto& p = prefix(u);
      auto consider = [&](std::size_t lo, std::size_t hi, std::size_t cut, bool upper) {
        std::int64_t bytes = p.bytes[hi] - p.bytes[lo];
        double load = p.load[hi] - p.load[lo];
        double w = measure_(bytes, load);
        if (w < need || w > amount || bytes > room || w <= 0) return;
        Piece piece{ui, false, cut, upper, p.rows[hi] - p.rows[lo], bytes, load, w};
        if (better(piece)) best = piece;
      };
      for (std::size_t i = u.a + 1; i < u.b; ++i) {
        if (!u.keep || i <= *u.keep) consider(u.a, i, i, false);
        if (!u.keep || i >= *u.keep + 1) consider(i, u.b, i, true);
      }
    }
    return best;
  }

  // How much has to move between d and r for the one outside the band to come inside: 0 when
  // neither is outside.
  double band_need(std::size_t d, std::size_t r) const {
    const double t = opt_.threshold;
    double need = 0;
    if (out_of_band(d)) need = std::max(need, value(d) - (1 + t) * shards_[d].target);
    if (out_of_band(r)) need = std::max(need, (1 - t) * shards_[r].target - value(r));
    return need;
  }

  std::optional<Piece> choose(std::size_t d, std::size_t r) {
    double e = value(d) - shards_[d].aim, f = shards_[r].aim - value(r);
    double amount = std::max(0.0, std::min(e, f));
    if (forced(d)) amount = std::max(0.0, f);
    std::int64_t room = byte_room(r);
    if (room <= 0) return std::nullopt;
    if (!forced(d)) {
      // The step into the band, when the aims let that much flow from d to r: the smallest piece
      // that gets there, not the largest that fits (past the aims up to the targets when the
      // histogram is coarser than the gap: one step rather than two).
      double need = band_need(d, r);
      double to_targets = std::min(value(d) - shards_[d].target, shards_[r].target - value(r));
      if (need > 0 && need <= amount * (1 + 1e-12) && need <= to_targets)
        if (auto piece = smallest_over(d, need, to_targets, room)) return piece;
    }
    auto whole = whole_fit(d, amount, room);
    if (whole && whole->w >= 0.9 * amount) return whole;
    auto cut = cut_fit(d, amount, room);
    if (cut && (!whole || cut->w > whole->w / 0.9)) return cut;
    if (whole) return whole;
    if (aiming_) return std::nullopt;  // no piece fits the aims: the targets' overshoot comes later
    if (auto over = overshoot(d, r, amount, room)) return over;
    if (forced(d))  // a pinned hot key's neighbours must leave even when no receiver has a gap
      for (auto ui : shards_[d].keepers)
        if (units_[ui].in_set)
          if (auto piece = best_cut(ui, std::numeric_limits<double>::infinity(), room))
            if (lowers_no_peak(d, r, piece->w)) return piece;
    return std::nullopt;
  }

  KeyRange remainder_range(const Unit& u) const {
    if (!u.splittable) return u.m->range;
    KeyRange r = u.m->range;
    if (u.a > 0) r.low = u.m->slices[u.a].low;
    if (u.b < u.m->slices.size()) r.high = u.m->slices[u.b].low;
    return r;
  }

  // Moves `piece` from d to r as the plan's next step.
  void take(std::size_t d, std::size_t r, const Piece& piece) {
    Step step = step_for(d, r, piece);
    unindex_shard(d);
    unindex_shard(r);
    move_piece(d, r, piece);
    std::size_t index = plan_.steps.size();
    shards_[d].last_step = index;
    shards_[r].last_step = index;
    plan_.steps.push_back(std::move(step));
    index_shard(d);
    index_shard(r);
  }

  Step step_for(std::size_t d, std::size_t r, const Piece& piece) const {
    const auto& u = units_[piece.unit];
    Step step;
    step.kind = piece.whole ? StepKind::move : StepKind::split;
    step.map = u.m->map;
    step.from = fleet_.shards[d].name;
    step.to = fleet_.shards[r].name;
    KeyRange rest = remainder_range(u);
    if (piece.whole) {
      step.range = rest;
    } else {
      const Key& at = u.m->slices[piece.cut].low;
      step.at = at;
      step.move_upper = piece.upper;
      step.range = piece.upper ? KeyRange{at, rest.high} : KeyRange{rest.low, at};
    }
    // A cut that leaves the remainder's only slices on the other side is a whole move.
    step.rows = piece.rows;
    step.bytes = piece.bytes;
    step.load = piece.load;
    step.batches = static_cast<int>(std::max<std::int64_t>(1, (piece.bytes + opt_.batch_bytes - 1) / opt_.batch_bytes));
    step.offline_seconds_per_batch =
        static_cast<double>(piece.bytes) / step.batches / opt_.copy_bytes_per_second;
    if (shards_[d].last_step) step.after.push_back(*shards_[d].last_step);
    if (shards_[r].last_step && shards_[r].last_step != shards_[d].last_step) step.after.push_back(*shards_[r].last_step);
    std::sort(step.after.begin(), step.after.end());
    return step;
  }

  // The piece's bytes and load change shard; what is left of its unit stays on d, movable
  // again unless it is only a pinned hot key.
  void move_piece(std::size_t d, std::size_t r, const Piece& piece) {
    auto& u = units_[piece.unit];
    shards_[d].units.erase({u.w, piece.unit});
    u.in_set = false;
    shards_[d].bytes -= piece.bytes;
    shards_[d].load -= piece.load;
    shards_[r].bytes += piece.bytes;
    shards_[r].load += piece.load;
    if (!piece.whole) {
      if (piece.upper) u.b = piece.cut;
      else u.a = piece.cut;
      u.rows -= piece.rows;
      u.bytes -= piece.bytes;
      u.load -= piece.load;
      u.w = measure_(u.bytes, u.load);
      bool only_key = u.keep && u.b - u.a == 1;
      if (!only_key) {
        shards_[d].units.emplace(u.w, piece.unit);
        u.in_set = true;
      }
    }
    moved_bytes_ += piece.bytes;
  }

  bool out_of_band(std::size_t i) const {
    const auto& st = shards_[i];
    if (forced(i)) return true;
    double gap = std::abs(value(i) - st.target);
    return gap > opt_.threshold * st.target + 1e-9 * (1 + st.target);
  }

  bool all_in_band() const {
    for (std::size_t i = 0; i < shards_.size(); ++i)
      if (out_of_band(i) && (shards_[i].receives || value(i) > shards_[i].target)) return false;
    return true;
  }

  // Pairs the shard furthest above its aim with the one furthest below and moves a piece from
  // one to the other until a stop condition holds; notes why it stopped and what is left over.
  void greedy() {
    donor_key_.assign(shards_.size(), 0);
    receiver_key_.assign(shards_.size(), 0);
    for (std::size_t i = 0; i < shards_.size(); ++i) index_shard(i);
    plan_.notes.push_back(step_until_stopped());
    note_shards_left_over();
  }

  // The loop itself; returns why it stopped.
  std::string step_until_stopped() {
    while (true) {
      if (donors_.empty()) return "no shard above its target can give more";
      if (receivers_.empty()) return "no online shard can receive data";
      std::size_t d = donors_.rbegin()->second, r = receivers_.rbegin()->second;
      if (pair_balanced(d, r))
        return fmt::format("balanced: every shard is within {} of its target", percent(opt_.threshold));
      if (!forced(d) && value(d) <= shards_[d].aim && aiming_) {
        stop_aiming();
        continue;
      }
      if (auto why = stop_reason(d)) return *why;
      step_or_set_aside(d, r);
    }
  }

  // Neither the top donor nor the top receiver is outside the band (while aiming, the pair at
  // the top is ordered by the aims, not by the band: then every shard must be inside it).
  bool pair_balanced(std::size_t d, std::size_t r) const {
    bool d_out = out_of_band(d) && value(d) > shards_[d].target, r_out = out_of_band(r) && value(r) < shards_[r].target;
    return !forced(d) && !(d_out || r_out) && (!aiming_ || all_in_band());
  }

  // Why no step may follow with `d` as the donor: nothing above its target, or a limit reached.
  std::optional<std::string> stop_reason(std::size_t d) const {
    if (!forced(d) && value(d) <= shards_[d].target)
      return "the shards below their target can only be filled from shards that may not give (held, excluded, "
             "readonly or offline)";
    if (opt_.max_moves && static_cast<int>(plan_.steps.size()) >= *opt_.max_moves)
      return fmt::format("stopped at --max-moves {}", *opt_.max_moves);
    if (opt_.max_bytes && moved_bytes_ >= *opt_.max_bytes) return fmt::format("stopped at --max-bytes {}", *opt_.max_bytes);
    return std::nullopt;
  }

  // Moves the piece `choose` finds from d to r; without one, d has given what fits its aim (done
  // for now) or, past the aims, is stuck.
  void step_or_set_aside(std::size_t d, std::size_t r) {
    if (auto piece = choose(d, r)) {
      take(d, r, *piece);
      return;
    }
    unindex_shard(d);
    if (aiming_ && !forced(d)) shards_[d].aim = value(d);
    else shards_[d].stuck = true;
    index_shard(d);
  }

  // Notes on shards the loop left short of what was asked: not drained, stuck above target,
  // or drained but keeping held mappings.
  void note_shards_left_over() {
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      const auto& st = shards_[i];
      const auto& name = st.s->name;
      if (st.drained && !st.units.empty())
        plan_.notes.push_back("shard " + name + " is not drained: " + std::to_string(movable_bytes(i)) +
                              " movable bytes found no room (capacity or a limit)");
      if (st.stuck && out_of_band(i) && value(i) > st.target)
        plan_.notes.push_back(fmt::format(
            "shard {} stays {} above its target: no range it may give fits the gap or improves balance by "
            "--min-improvement {}",
            name, percent(st.target > 0 ? value(i) / st.target - 1 : 1), opt_.min_improvement));
      if (st.drained && keeps_held_mappings(name))
        plan_.notes.push_back("shard " + name + " keeps mappings that are held or outside --map: it is not empty");
    }
  }

  bool keeps_held_mappings(const std::string& shard) const {
    return std::any_of(fleet_.mappings.begin(), fleet_.mappings.end(), [&](const Mapping& m) {
      return m.shard == shard && (m.held || (opt_.map && *opt_.map != m.map));
    });
  }

  // The fullest balancing shard's objective over its fair target (by weight and capacity, hot
  // keys not considered): max / mean when weights are equal and no capacity binds.
  double imbalance(const std::vector<double>& v) const {
    double max = 0, sum = 0;
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      if (!shards_[i].receives || fair_target_[i] <= 0) continue;
      max = std::max(max, v[i] / fair_target_[i]);
      sum += v[i];
    }
    return sum > 0 ? max : 1;
  }

  void finish(const std::vector<double>& value_before) {
    (void)value_before;
    plan_.imbalance_after = imbalance(values());
    plan_.bytes_moved = moved_bytes_;
    auto before = shard_usage(fleet_);
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      Balance b;
      b.shard = shards_[i].s->name;
      b.bytes_before = before[i].bytes;
      b.load_before = before[i].load;
      b.bytes_after = shards_[i].bytes;
      b.load_after = shards_[i].load;
      b.target_bytes = shards_[i].target_bytes;
      plan_.shards.push_back(std::move(b));
    }
    // Isolated: the hot key's shard ends up holding nothing but the key (and its fixed part).
    for (auto& u : plan_.unsplittable) {
      auto i = shard_index_.at(u.shard);
      u.isolated = shards_[i].pinned && shards_[i].bytes - shards_[i].s->fixed_bytes == u.bytes;
    }
    std::set<std::string> names;
    for (const auto& s : plan_.steps) names.insert(s.map);
    for (const auto& u : plan_.unsplittable) names.insert(u.map);
    for (const auto& m : fleet_.maps)
      if (names.count(m.name)) plan_.maps.push_back(m);
  }
};

}  // namespace

Plan plan(const Fleet& fleet, const Options& options) { return Planner(fleet, options).run(); }

}  // namespace shardctl::planner
