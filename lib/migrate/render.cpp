#include "migrate/render.hpp"

#include <cstdio>

namespace shardctl::migrate {

void print_plan(std::ostream& out, const Plan& p) {
  auto megabytes = [](std::uint64_t b) { return std::to_string((b + 999'999) / 1'000'000) + " MB"; };
  out << p.kind << " plan for map " << p.map.name << ":\n";
  for (const auto& s : p.segments) {
    out << "  move " << (p.point ? "key " + routing::format_key(*p.point) : "keys " + routing::format_range(s.range))
        << " from " << s.source.name << " to " << p.target.name;
    if (!p.point && !s.mapping.is_point) out << " (mapping " << routing::format_range(s.mapping.range) << ")";
    out << '\n';
  }
  out << "  tables (copy order): ";
  for (std::size_t i = 0; i < p.tables.size(); ++i) out << (i ? ", " : "") << p.tables[i].name;
  out << "\n  keys: " << p.keys_total << ", rows: " << p.rows_total;
  out << "\n  estimated size: " << megabytes(p.estimated_bytes) << ", free on " << p.target.name << ": "
      << (p.target_free_bytes ? megabytes(*p.target_free_bytes) : std::string("not readable")) << '\n';
  if (!p.load_path.empty()) out << "  load path: " << p.load_path << '\n';
  if (!p.tables.empty()) out << "  verify: " << verify_method(p.tables) << '\n';
  out << "  batches: " << p.batches.size() << '\n';
  for (std::size_t i = 0; i < p.batches.size() && i < 10; ++i)
    out << "    " << (i + 1) << ": "
        << (p.point ? routing::format_key(*p.point) : routing::format_range(p.batches[i].range)) << " from "
        << p.segments.at(p.batches[i].segment).source.name << '\n';
  if (p.batches.size() > 10) out << "    ... " << (p.batches.size() - 10) << " more\n";
}

nlohmann::json plan_json(const Plan& p) {
  nlohmann::json batches = nlohmann::json::array(), segments = nlohmann::json::array();
  for (const auto& b : p.batches)
    batches.push_back({{"range", p.point ? routing::format_key(*p.point) : routing::format_range(b.range)},
                       {"source", p.segments.at(b.segment).source.name},
                       {"keys", b.keys}});
  for (const auto& s : p.segments)
    segments.push_back({{"range", p.point ? routing::format_key(*p.point) : routing::format_range(s.range)},
                        {"source", s.source.name}});
  return {{"kind", std::string(journal::to_text(p.kind))},
          {"map", p.map.name},
          {"range", p.point ? routing::format_key(*p.point) : routing::format_range(p.range)},
          {"source", p.segments.size() == 1 ? nlohmann::json(p.segments.front().source.name) : nlohmann::json(nullptr)},
          {"target", p.target.name},
          {"segments", segments},
          {"batches", batches},
          {"keys_total", p.keys_total},
          {"rows_total", p.rows_total},
          {"estimated_bytes", p.estimated_bytes},
          {"target_free_bytes", p.target_free_bytes ? nlohmann::json(*p.target_free_bytes) : nlohmann::json(nullptr)},
          {"load_path", p.load_path},
          {"verify", verify_method(p.tables)},
          {"warnings", p.warnings}};
}

void print_status(std::ostream& out, const journal::OpStatus& o) {
  out << "operation: " << o.id << "\nkind:      " << o.kind << "\nmap:       " << o.map << "\nrange:     " << o.range
      << "\nfrom:      " << o.source << "\nto:        " << o.target << "\nstatus:    " << o.status
      << (o.cancel_requested && o.status != journal::OperationStatus::cancelled ? " (cancel requested)" : "") << "\nphase:     " << o.phase
      << "\nbatches:   " << o.batches_done << "/" << o.batches << "\nkeys:      " << o.keys_done << "/" << o.keys_total
      << "\nrows:      " << o.rows_moved << "/" << o.rows_total << '\n';
  if (!o.lease_holder.empty()) out << "held by:   " << o.lease_holder << '\n';
  if (!o.error.empty()) out << "error:     " << o.error << '\n';
  if (o.offline_max_seconds) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "median %.3f s, max %.3f s per batch", *o.offline_median_seconds, *o.offline_max_seconds);
    out << "offline:   " << buf << '\n';
  }
  out << "created:   " << o.created_at << "\nupdated:   " << o.updated_at << '\n';
}

std::string progress_line(const Progress& p, double seconds) {
  char buf[160];
  double mb = static_cast<double>(p.bytes) / 1e6;
  double eta = p.batch > 0 ? seconds / p.batch * (p.batches - p.batch) : 0;
  std::snprintf(buf, sizeof buf, "\rbatch %d/%d  rows %lld  %.1f MB/s  ETA %.0f s   ", p.batch, p.batches,
                static_cast<long long>(p.rows), seconds > 0 ? mb / seconds : 0.0, eta);
  return buf;
}

}  // namespace shardctl::migrate
