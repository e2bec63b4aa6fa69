#include "migrate/render.hpp"

#include <cstdio>

namespace shardctl::migrate {

void print_plan(std::ostream& out, const Plan& p) {
  out << "split plan for map " << p.map.name << ":\n"
      << "  move keys " << routing::format_range(p.range) << " from " << p.source.name << " to " << p.target.name << '\n'
      << "  cut from mapping " << routing::format_range(p.mapping.range) << '\n'
      << "  tables (copy order): ";
  for (std::size_t i = 0; i < p.tables.size(); ++i) out << (i ? ", " : "") << p.tables[i].name;
  out << "\n  batches: " << p.batches.size() << '\n';
  for (std::size_t i = 0; i < p.batches.size() && i < 10; ++i)
    out << "    " << (i + 1) << ": " << routing::format_range(p.batches[i]) << '\n';
  if (p.batches.size() > 10) out << "    ... " << (p.batches.size() - 10) << " more\n";
  for (const auto& w : p.warnings) out << "  warning: " << w << '\n';
}

void print_status(std::ostream& out, const OpStatus& o) {
  out << "operation: " << o.id << "\nkind:      " << o.kind << "\nmap:       " << o.map << "\nrange:     " << o.range
      << "\nfrom:      " << o.source << "\nto:        " << o.target << "\nstatus:    " << o.status
      << (o.cancel_requested && o.status != "cancelled" ? " (cancel requested)" : "") << "\nphase:     " << o.phase
      << "\nbatches:   " << o.batches_done << "/" << o.batches << "\nrows:      " << o.rows_moved << '\n';
  if (!o.lease_holder.empty()) out << "held by:   " << o.lease_holder << '\n';
  if (!o.error.empty()) out << "error:     " << o.error << '\n';
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
