// Benchmark: the quality and speed of the rebalance planner.
// Six generated fleets; for each, the lower bound on bytes moved (the sum over shards of bytes
// above target), a reimplementation (here only) of the greedy rebalancer Citus documents, and
// shardctl's planner. Then the scale run: 100,000 mappings over 256 shards, skewed and
// balanced, timed, with peak RSS. Prints two markdown tables. Build and run: bench/rebalance.sh.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "planner/planner.hpp"

using namespace shardctl::planner;
using shardctl::routing::Key;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

namespace {

std::string shard_name(int i) {
  std::string n = "s";
  n += std::to_string(i);
  return n;
}

// One range mapping per `keys_per_mapping` tenants; each tenant one single-key histogram slice.
struct Builder {
  Fleet fleet;
  std::int64_t next_key = 0;
  explicit Builder(int shards) {
    fleet.maps.push_back({"tenants", MapKind::range, KeyType::int8});
    for (int s = 0; s < shards; ++s) {
      Shard sh;
      sh.name = shard_name(s);
      fleet.shards.push_back(sh);
    }
  }
  void add(int shard, const std::vector<std::int64_t>& tenant_bytes) {
    Mapping m;
    m.map = "tenants";
    m.shard = shard_name(shard);
    m.range.low = Key{next_key};
    for (auto b : tenant_bytes) {
      Slice s;
      s.low = Key{next_key++};
      s.bytes = b;
      s.rows = b / 100;
      s.single_key = true;
      m.slices.push_back(s);
      m.bytes += b;
      m.rows += s.rows;
    }
    m.range.high = Key{next_key};
    fleet.mappings.push_back(std::move(m));
  }
};

constexpr std::int64_t MB = 1 << 20;

// Mappings of `per` tenants each, tenant sizes from `size`, dealt round-robin to `shards` shards.
template <class Size>
Fleet dealt(int shards, int mappings, int per, Size size, int deal_to) {
  Builder b(shards);
  for (int i = 0; i < mappings; ++i) {
    std::vector<std::int64_t> t;
    for (int k = 0; k < per; ++k) t.push_back(size());
    b.add(i % deal_to, t);
  }
  return b.fleet;
}

struct Scenario {
  std::string name;
  Fleet fleet;
  Options options;
};

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<std::int64_t> uni(5 * MB, 15 * MB);
  auto uniform = [&] { return uni(rng); };
  out.push_back({"uniform (16 shards, 512 ranges of 8 tenants)", dealt(16, 512, 8, uniform, 16), {}});

  // Zipf-skewed tenants (s = 1.1), shuffled into ranges of 8.
  {
    std::vector<std::int64_t> sizes;
    for (int r = 1; r <= 4096; ++r) sizes.push_back(static_cast<std::int64_t>(2000.0 * MB / std::pow(r, 1.1)) + 64 * 1024);
    std::shuffle(sizes.begin(), sizes.end(), rng);
    std::size_t i = 0;
    out.push_back({"Zipf tenants (16 shards, 4096 tenants, s=1.1)",
                   dealt(16, 512, 8, [&] { return sizes[i++]; }, 16), {}});
  }
  // One tenant bigger than the mean shard.
  {
    auto f = dealt(8, 256, 8, uniform, 8);
    auto& m = f.mappings[5];
    std::int64_t whale = 0;
    for (const auto& x : f.mappings) whale += x.bytes;
    whale = whale / 8 * 3 / 2;
    m.bytes += whale - m.slices[3].bytes;
    m.slices[3].bytes = whale;
    out.push_back({"one tenant 1.5x the mean shard (8 shards)", std::move(f), {}});
  }
  {
    auto f = dealt(16, 480, 8, uniform, 15);
    out.push_back({"new empty shard (15 + 1 shards)", std::move(f), {}});
  }
  {
    Options o;
    o.drain_shards = {shard_name(3)};
    out.push_back({"drain one shard (16 shards)", dealt(16, 512, 8, uniform, 16), o});
  }
  {
    // 3 shards at 90% of capacity, one at 10%.
    Builder b(4);
    std::int64_t cap = 4096 * MB;
    for (int s = 0; s < 4; ++s) {
      b.fleet.shards[static_cast<std::size_t>(s)].capacity_bytes = cap;
      std::int64_t want = s < 3 ? cap * 9 / 10 : cap / 10, have = 0;
      while (have < want) {
        std::vector<std::int64_t> t;
        for (int k = 0; k < 8; ++k) t.push_back(uniform());
        for (auto x : t) have += x;
        b.add(s, t);
      }
    }
    out.push_back({"3 shards at 90% capacity, 1 at 10%", std::move(b.fleet), {}});
  }
  return out;
}

// Targets by weight and capacity over the shards that may hold data (drained: 0).
std::vector<double> targets(const Fleet& f, const Options& o) {
  auto usage = shard_usage(f);
  double total = 0;
  std::vector<bool> member(f.shards.size());
  for (std::size_t i = 0; i < f.shards.size(); ++i) {
    total += static_cast<double>(usage[i].bytes);
    member[i] = std::find(o.drain_shards.begin(), o.drain_shards.end(), f.shards[i].name) == o.drain_shards.end();
  }
  std::vector<double> t(f.shards.size(), 0.0);
  double left = total;
  std::vector<bool> fixed(f.shards.size(), false);
  for (bool clamped = true; clamped;) {
    clamped = false;
    double w = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (member[i] && !fixed[i]) w += f.shards[i].weight;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!member[i] || fixed[i]) continue;
      t[i] = left * f.shards[i].weight / w;
      auto cap = static_cast<double>(f.shards[i].capacity_bytes);
      if (cap > 0 && t[i] > cap) {
        t[i] = cap;
        fixed[i] = true;
        left -= cap;
        clamped = true;
      }
    }
  }
  return t;
}

double lower_bound(const Fleet& f, const Options& o) {
  auto usage = shard_usage(f);
  auto t = targets(f, o);
  double sum = 0;
  for (std::size_t i = 0; i < t.size(); ++i) sum += std::max(0.0, static_cast<double>(usage[i].bytes) - t[i]);
  return sum;
}

double max_over_mean(const std::vector<double>& bytes, const std::vector<bool>& member) {
  double max = 0, sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (member[i]) max = std::max(max, bytes[i]), sum += bytes[i], ++n;
  return sum > 0 ? max / (sum / n) : 1;
}

struct Outcome {
  double imbalance = 0;
  double bytes = 0;
  std::size_t steps = 0;
  double ms = 0;
  double cpu_ms = 0;
};

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// The greedy rebalancer Citus documents (rebalance_table_shards, by_disk_size): utilization is
// bytes / capacity; shards on drained nodes move to the emptiest node first; then, fullest node
// to emptiest, the first shard whose move improves balance, while a node is outside threshold
// 0.1 of the average; a move that leaves the target above the source must cut the utilization
// difference by at least improvement_threshold (0.5) of the shard's own utilization. Whole
// shards only: Citus does not split shard groups while rebalancing.
Outcome citus_greedy(const Fleet& f, const Options& o) {
  auto t0 = std::chrono::steady_clock::now();
  const double threshold = 0.1, improvement_threshold = 0.5;
  std::size_t n = f.shards.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[f.shards[i].name] = i;
  std::vector<double> cap(n), cost(n, 0.0);
  std::vector<bool> drained(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    cap[i] = f.shards[i].capacity_bytes > 0 ? static_cast<double>(f.shards[i].capacity_bytes) : 1.0;
    drained[i] = std::find(o.drain_shards.begin(), o.drain_shards.end(), f.shards[i].name) != o.drain_shards.end();
  }
  std::vector<std::vector<double>> shards_on(n);
  for (const auto& m : f.mappings) {
    auto s = index[m.shard];
    shards_on[s].push_back(static_cast<double>(m.bytes));
    cost[s] += static_cast<double>(m.bytes);
  }
  Outcome out;
  auto util = [&](std::size_t i) { return cost[i] / cap[i]; };
  auto move = [&](std::size_t from, std::size_t k, std::size_t to) {
    double c = shards_on[from][k];
    shards_on[from].erase(shards_on[from].begin() + static_cast<std::ptrdiff_t>(k));
    shards_on[to].push_back(c);
    cost[from] -= c;
    cost[to] += c;
    out.bytes += c;
    ++out.steps;
  };
  for (std::size_t d = 0; d < n; ++d)
    while (drained[d] && !shards_on[d].empty()) {
      std::size_t best = n;
      for (std::size_t i = 0; i < n; ++i)
        if (!drained[i] && (best == n || util(i) < util(best))) best = i;
      move(d, 0, best);
    }
  for (int guard = 0; guard < 100000; ++guard) {
    double total = 0, capacity = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (!drained[i]) total += cost[i], capacity += cap[i];
    double avg = total / capacity;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < n; ++i)
      if (!drained[i]) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return util(a) > util(b); });
    bool moved = false;
    for (std::size_t si = 0; si < order.size() && !moved; ++si) {
      auto src = order[si];
      for (std::size_t ti = order.size(); ti-- > si + 1 && !moved;) {
        auto dst = order[ti];
        if (util(src) <= avg * (1 + threshold) && util(dst) >= avg * (1 - threshold)) continue;
        for (std::size_t k = 0; k < shards_on[src].size(); ++k) {
          double c = shards_on[src][k];
          double old_src = util(src), old_dst = util(dst);
          double new_src = (cost[src] - c) / cap[src], new_dst = (cost[dst] + c) / cap[dst];
          if (new_dst > old_src) continue;  // the target would end fuller than the source was
          if (new_dst > new_src) {
            double before = old_src - old_dst, after = new_dst - new_src;
            if (after >= before) continue;
            if ((before - after) < improvement_threshold * (c / cap[dst])) continue;
          }
          move(src, k, dst);
          moved = true;
          break;
        }
      }
    }
    if (!moved) break;
  }
  std::vector<bool> member(n);
  for (std::size_t i = 0; i < n; ++i) member[i] = !drained[i];
  std::vector<double> per(n);
  for (std::size_t i = 0; i < n; ++i) per[i] = cost[i];
  out.imbalance = max_over_mean(per, member);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Outcome shardctl_plan(const Fleet& f, const Options& o, Plan* keep = nullptr) {
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_ms();
  auto p = plan(f, o);
  Outcome out;
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.cpu_ms = cpu_ms() - c0;
  std::vector<double> per;
  std::vector<bool> member;
  for (std::size_t i = 0; i < p.shards.size(); ++i) {
    per.push_back(static_cast<double>(p.shards[i].bytes_after));
    member.push_back(std::find(o.drain_shards.begin(), o.drain_shards.end(), p.shards[i].shard) == o.drain_shards.end());
  }
  out.imbalance = max_over_mean(per, member);
  out.bytes = static_cast<double>(p.bytes_moved);
  out.steps = p.steps.size();
  if (keep) *keep = std::move(p);
  return out;
}

double before_imbalance(const Fleet& f, const Options& o) {
  auto usage = shard_usage(f);
  std::vector<double> per;
  std::vector<bool> member;
  for (std::size_t i = 0; i < usage.size(); ++i) {
    per.push_back(static_cast<double>(usage[i].bytes));
    member.push_back(std::find(o.drain_shards.begin(), o.drain_shards.end(), f.shards[i].name) == o.drain_shards.end());
  }
  return max_over_mean(per, member);
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / (1024.0 * MB));
  return buf;
}

std::string ratio(double a, double b) {
  char buf[32];
  if (b <= 0) return a <= 0 ? "-" : "inf";
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
  return buf;
}

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// 100,000 mappings over 256 shards, 8 histogram slices each, random sizes; `skew` puts twice
// as many on the first 64 shards and leaves the last 16 empty.
Fleet scale_fleet(bool skew) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> size(1 * MB, 3 * MB);
  Builder b(256);
  b.fleet.mappings.reserve(100000);
  for (int i = 0; i < 100000; ++i) {
    int shard = i % 256;
    if (skew) {
      shard = static_cast<int>(rng() % 304);
      if (shard >= 240) shard = static_cast<int>(rng() % 64);
    }
    std::vector<std::int64_t> t;
    for (int k = 0; k < 8; ++k) t.push_back(size(rng) / 8);
    b.add(shard, t);
    b.fleet.mappings.back().held = false;
    for (auto& s : b.fleet.mappings.back().slices) s.single_key = false;
  }
  return b.fleet;
}

int quality() {
  std::printf("### Plan quality (size objective; each cell: final max/mean, bytes moved, bytes / lower bound, steps)\n\n");
  std::printf("| fleet | max/mean before | lower bound | Citus greedy (threshold 0.1) | shardctl --threshold 0.1 | shardctl default (0.05) | shardctl 0.1 / greedy bytes |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  auto cell = [](const Outcome& o, double lb) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.3f, %s, %s, %zu", o.imbalance, gb(o.bytes).c_str(), ratio(o.bytes, lb).c_str(), o.steps);
    return std::string(buf);
  };
  std::vector<std::string> isolation;
  for (auto& sc : scenarios()) {
    double lb = lower_bound(sc.fleet, sc.options);
    auto g = citus_greedy(sc.fleet, sc.options);
    Plan p;
    auto s = shardctl_plan(sc.fleet, sc.options, &p);
    Options same = sc.options;
    same.threshold = 0.1;
    auto s1 = shardctl_plan(sc.fleet, same);
    std::string hot = p.unsplittable.empty() ? "" : (p.unsplittable[0].isolated ? " (hot key isolated)" : " (hot key reported)");
    std::printf("| %s%s | %.3f | %s | %s | %s | %s | %s |\n", sc.name.c_str(), hot.c_str(),
                before_imbalance(sc.fleet, sc.options), gb(lb).c_str(), cell(g, lb).c_str(), cell(s1, lb).c_str(),
                cell(s, lb).c_str(), ratio(s1.bytes, g.bytes).c_str());
    // What isolating the hot keys costs at least: everything else on their shards leaves.
    double floor = 0;
    std::string where;
    for (const auto& u : p.unsplittable) {
      if (!u.isolated) continue;
      for (const auto& b : p.shards)
        if (b.shard == u.shard) floor += static_cast<double>(b.bytes_before - u.bytes);
      for (const auto& sh : sc.fleet.shards)
        if (sh.name == u.shard) floor -= static_cast<double>(sh.fixed_bytes);
      where += where.empty() ? u.shard : ", " + u.shard;
    }
    if (!where.empty()) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "- %s: isolating the hot keys moves at least %s (all else off %s); shardctl --threshold 0.1 "
                    "moves %s (%s of that), greedy %s",
                    sc.name.c_str(), gb(floor).c_str(), where.c_str(), gb(s1.bytes).c_str(), ratio(s1.bytes, floor).c_str(),
                    gb(g.bytes).c_str());
      isolation.push_back(line);
    }
  }
  if (!isolation.empty()) {
    std::printf("\nHot keys isolated (greedy moves whole ranges and leaves the key's neighbours with it):\n\n");
    for (const auto& line : isolation) std::printf("%s\n", line.c_str());
  }
  return 0;
}

// One row of the scale table, in a process of its own so that its peak RSS is its own.
int scale(bool skew) {
  auto f = scale_fleet(skew);
  long rss_fleet = peak_rss_mb();
  Options o;
  double lb = lower_bound(f, o);
  double before = before_imbalance(f, o);
  Plan p;
  auto s = shardctl_plan(f, o, &p);
  std::printf("| %s | %.0f ms (CPU %.0f ms) | %zu | %s | %.3f -> %.3f | %ld MB (fleet alone %ld MB) |\n",
              skew ? "skewed: 64 shards doubled, 16 empty" : "balanced (the citus#7021 case)", s.ms, s.cpu_ms, s.steps,
              ratio(s.bytes, lb).c_str(), before, s.imbalance, peak_rss_mb(), rss_fleet);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "quality";
  if (what == "quality") return quality();
  if (what == "scale-skewed") return scale(true);
  if (what == "scale-balanced") return scale(false);
  std::fprintf(stderr, "usage: rebalance_quality quality|scale-skewed|scale-balanced\n");
  return 64;
}
