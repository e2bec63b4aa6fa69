#include "refdata/render.hpp"

namespace shardctl::refdata {
namespace {

void print_keys(std::ostream& out, const std::string& what, const std::vector<std::string>& keys, int sample) {
  if (keys.empty()) return;
  out << "  " << what << ":";
  for (std::size_t i = 0; i < keys.size() && static_cast<int>(i) < sample; ++i) out << ' ' << keys[i];
  if (keys.size() > static_cast<std::size_t>(sample)) out << " ... (" << keys.size() << ")";
  out << '\n';
}

}  // namespace

void print_sync_text(std::ostream& out, const SyncReport& report, int sample) {
  bool any = false;
  for (const auto& s : report.shards) {
    if (!s.unreachable.empty()) {
      out << s.shard << ": unreachable: " << s.unreachable << '\n';
      continue;
    }
    if (!s.refused.empty()) {
      out << s.shard << ": refused, nothing changed: " << s.refused << '\n';
      continue;
    }
    for (const auto& c : s.changes) {
      any = true;
      std::string would = report.dry_run ? "would " : "";
      out << s.shard << ": " << c.table << " from " << c.source << ": " << (c.replaced ? "replaced whole (no primary key), " : "")
          << would << (report.dry_run ? "insert " : "inserted ") << c.inserted.size() << ", "
          << (report.dry_run ? "update " : "updated ") << c.updated.size() << ", " << (report.dry_run ? "delete " : "deleted ")
          << c.deleted.size() << '\n';
      print_keys(out, report.dry_run ? "would insert" : "inserted", c.inserted, sample);
      print_keys(out, report.dry_run ? "would update" : "updated", c.updated, sample);
      print_keys(out, report.dry_run ? "would delete" : "deleted", c.deleted, sample);
    }
  }
  if (!any) out << "every copy already matches its source\n";
  else if (!report.dry_run) out << "the changed copies' chunk digests match their sources'\n";
}

nlohmann::json sync_to_json(const SyncReport& report) {
  using nlohmann::json;
  json doc;
  doc["dry_run"] = report.dry_run;
  doc["shards"] = json::array();
  for (const auto& s : report.shards) {
    json tables = json::array();
    for (const auto& c : s.changes)
      tables.push_back({{"table", c.table},
                        {"source", c.source},
                        {"replaced", c.replaced},
                        {"inserted", c.inserted},
                        {"updated", c.updated},
                        {"deleted", c.deleted}});
    doc["shards"].push_back({{"shard", s.shard},
                             {"tables", tables},
                             {"refused", s.refused.empty() ? json(nullptr) : json(s.refused)},
                             {"unreachable", s.unreachable.empty() ? json(nullptr) : json(s.unreachable)}});
  }
  return doc;
}

}  // namespace shardctl::refdata
