#include "stats/render.hpp"

#include <algorithm>
#include <cstdio>

#include "output/table.hpp"

namespace shardctl::stats {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string rate(const Counters& deltas, std::initializer_list<const char*> names) {
  if (deltas.empty()) return "-";
  double sum = 0;
  for (const char* n : names)
    if (auto it = deltas.find(n); it != deltas.end()) sum += it->second;
  return fixed(sum, 1);
}

}  // namespace

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while ((v >= 1024 || v <= -1024) && u < 5) v /= 1024, ++u;
  if (u == 0) return std::to_string(bytes) + " B";
  std::string out = fixed(v, 1);
  out += ' ';
  out += units[u];
  return out;
}

namespace {
std::string bytes_or_dash(const std::optional<std::int64_t>& b) { return b ? human_bytes(*b) : "-"; }
}  // namespace

void print_snapshot(std::ostream& out, const Snapshot& s) {
  out << "snapshot " << s.id << " taken " << s.taken_at << " (" << fixed(s.age_seconds, 0) << "s ago)";
  if (s.map_filter) out << ", map " << *s.map_filter;
  if (s.load_file) out << ", load file " << *s.load_file;
  out << "\nfingerprint " << s.fingerprint << "\n";
  bool live = std::all_of(s.mappings.begin(), s.mappings.end(), [](const MappingStats& m) { return m.live_bytes.has_value(); });
  if (!live) out << "live bytes: not measured (a snapshot taken before shardctl measured them); run shardctl stats collect\n";
  out << '\n';

  // PHYSICAL: what the database takes on disk (pg_database_size), dead space included; LIVE:
  // that less the dead space of its sharded tables, which the planner balances.
  output::TextTable shards({"SHARD", "STATUS", "PHYSICAL", "LIVE", "ROWS", "WRITES/S", "READS/S", "CAPACITY", "WEIGHT"});
  for (const auto& sh : s.shards) {
    std::int64_t rows = 0;
    for (const auto& m : s.mappings)
      if (m.shard == sh.shard) rows += m.rows;
    shards.add_row({sh.shard, std::string(catalog::to_text(sh.status)) + (sh.error ? " (" + *sh.error + ")" : std::string()), human_bytes(sh.db_bytes),
                    bytes_or_dash(sh.live_bytes), std::to_string(rows), rate(sh.deltas, {"n_tup_ins", "n_tup_upd", "n_tup_del"}),
                    rate(sh.deltas, {"idx_tup_fetch", "seq_tup_read"}),
                    sh.capacity_bytes ? human_bytes(*sh.capacity_bytes) : "-", fixed(sh.weight, 2)});
  }
  shards.print(out);
  out << '\n';

  output::TextTable maps({"MAP", "MAPPING", "SHARD", "ROWS", "LIVE", "PHYSICAL", "LOAD", "SLICES", "HOT KEYS"});
  for (const auto& m : s.mappings) {
    int hot = 0;
    for (const auto& sl : m.slices) hot += sl.single_key ? 1 : 0;
    std::string where = m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range);
    maps.add_row({m.map, where, m.shard, std::to_string(m.rows), bytes_or_dash(m.live_bytes), human_bytes(m.bytes), fixed(m.load, 1),
                  std::to_string(m.slices.size()), std::to_string(hot)});
  }
  maps.print(out);
}

}  // namespace shardctl::stats
