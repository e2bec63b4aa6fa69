#include "check/references.hpp"

#include <algorithm>

#include "catalog/names.hpp"
#include "refdata/compare.hpp"

namespace shardctl::check {
namespace {

std::string count_of(std::size_t n, const std::string& what) { return std::to_string(n) + " " + what; }

// Up to `sample` keys, each with what is wrong with it: "missing (3)", "changed (7)".
std::vector<std::string> samples_of(const refdata::RowDiff& rows, int sample) {
  std::vector<std::string> out;
  for (auto [what, keys] : {std::pair{"missing ", &rows.missing}, {"extra ", &rows.extra}, {"changed ", &rows.changed}})
    for (const auto& k : *keys)
      if (static_cast<int>(out.size()) < sample) out.push_back(what + k);
  return out;
}

}  // namespace

void compare_references(pg::Connection& catalog, const std::vector<const catalog::Shard*>& shards, const Options& options,
                        Report& report) {
  std::vector<refdata::RefTable> tables;
  for (const auto& t : catalog::Store(catalog).list_tables())
    if (t.kind == catalog::TableKind::reference)
      tables.push_back({t.name, catalog::quote_qualified(t.name), t.source, t.source_dsn});
  std::vector<refdata::ShardRef> refs;
  for (const auto* s : shards) refs.push_back({s->name, s->dsn});
  auto found = refdata::compare_fleet(refs, tables, options.parallel);
  for (const auto& u : found.unreachable)
    if (std::none_of(report.unreachable.begin(), report.unreachable.end(),
                     [&](const Unreachable& x) { return x.shard == u.shard; }))
      report.unreachable.push_back({u.shard, u.error, u.refused});
  for (const auto& t : found.tables) {
    for (const auto& d : t.drift)
      report.findings.push_back({Kind::reference_drift, Severity::critical, d.shard, t.table, "", 1, {},
                                 d.detail + "; never compared row by row"});
    if (!t.tie.empty()) {
      std::string groups;
      for (const auto& g : t.tie) {
        std::string names;
        for (const auto& s : g) names += (names.empty() ? "" : ",") + s;
        groups += (groups.empty() ? "" : " | ") + names;
      }
      report.findings.push_back({Kind::reference_tie, Severity::critical, "", t.table, groups,
                                 static_cast<std::int64_t>(t.tie.size()),
                                 {},
                                 "the " + count_of(t.copies, "copies") + " split into " + count_of(t.tie.size(), "groups") +
                                     " of equal size and no source is named: `shardctl table set " + t.table +
                                     " --source SHARD` names the right one"});
    }
    std::string source = "source " + t.source + (t.source_named ? "" : " (majority of " + count_of(t.copies, "copies") + ")");
    for (const auto& d : t.differs) {
      std::string detail = std::to_string(d.differing_chunks) + " of " + std::to_string(t.chunks) + " chunk(s) differ from " +
                           t.source + ": " + count_of(d.rows.missing.size(), "missing") + ", " +
                           count_of(d.rows.extra.size(), "extra") + ", " + count_of(d.rows.changed.size(), "changed") +
                           " row(s)";
      if (t.by_row) detail += "; no primary key: rows compared by their whole-row digest";
      detail += "; `shardctl table sync-reference " + t.table + "` fixes it";
      report.findings.push_back({Kind::reference_differs, Severity::critical, d.shard, t.table, source, d.rows.total(),
                                 samples_of(d.rows, options.sample), detail});
    }
  }
}

}  // namespace shardctl::check
