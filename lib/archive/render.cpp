// How archive runs read on a terminal (`archive show`, `op show` of an archive run).
#include <ostream>

#include "archive/archiver.hpp"
#include "output/table.hpp"

namespace shardctl::archive {

std::string keys_text(const std::optional<archive::KeyValues>& k) {
  if (!k) return "-";
  std::string out;
  for (const auto& v : *k) out += (out.empty() ? "" : ",") + v;
  return out;
}

std::int64_t total_rows(const nlohmann::json& rows) {
  std::int64_t n = 0;
  for (const auto& [t, v] : rows.items()) n += v.get<std::int64_t>();
  return n;
}

void print_run(std::ostream& out, const archive::RunReport& r) {
  out << "run:     " << r.op.id << '\n'
      << "job:     " << r.job.name << '\n'
      << "rows of: " << r.job.table << " where " << r.job.where << (r.job.cascade ? " (with every referencing row)" : "") << '\n'
      << "to:      " << r.job.to.describe() << '\n'
      << "status:  " << r.op.status << (r.op.phase.empty() || r.op.phase == journal::to_text(r.op.status) ? "" : " (" + r.op.phase + ")") << '\n';
  if (!r.op.error.empty()) out << "error:   " << r.op.error << '\n';
  output::TextTable t({"SHARD", "STATE", "BATCHES", "ROWS", "REFUSED", "CURSOR", "UPPER BOUND"});
  for (const auto& s : r.shards)
    t.add_row({s.shard, std::string(to_text(s.state)), std::to_string(s.batches_done), std::to_string(total_rows(s.rows)), std::to_string(s.refused),
               keys_text(s.cursor), keys_text(s.upper)});
  t.print(out);
  for (const auto& s : r.shards)
    for (const auto& [table, n] : s.rows.items())
      out << "  " << s.shard << ": " << n.get<std::int64_t>() << " rows of " << table << '\n';
}

}  // namespace shardctl::archive
