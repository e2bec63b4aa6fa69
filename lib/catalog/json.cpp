#include "catalog/json.hpp"

#include <utility>

#include "pg/dsn.hpp"

namespace shardctl::catalog {

std::string mapping_key_text(const Mapping& m) {
  return m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range);
}

nlohmann::json to_json(const Shard& s) {
  auto replication = s.replication_dsn ? nlohmann::json(pg::display_dsn(*s.replication_dsn)) : nlohmann::json(nullptr);
  return {{"name", s.name},
          {"dsn", pg::display_dsn(s.dsn)},
          {"status", std::string(to_text(s.status))},
          {"replication_dsn", std::move(replication)},
          {"app_dsn", s.app_dsn ? nlohmann::json(pg::display_dsn(*s.app_dsn)) : nlohmann::json(nullptr)}};
}

nlohmann::json route_json(const LoadedMap& loaded, std::int32_t entry) {
  nlohmann::json j = {{"version", loaded.version}, {"is_point", nullptr}, {"low", nullptr}, {"high", nullptr}, {"dsn", nullptr}};
  if (entry < 0 || static_cast<std::size_t>(entry) >= loaded.mappings.size()) return j;
  const Mapping& m = loaded.mappings[static_cast<std::size_t>(entry)];
  auto bound = [](const std::optional<routing::Key>& k) { return k ? nlohmann::json(routing::format_key(*k)) : nlohmann::json(nullptr); };
  j["is_point"] = m.is_point;
  j["low"] = bound(m.range.low);
  j["high"] = m.is_point ? nlohmann::json(nullptr) : bound(m.range.high);
  for (const auto& s : loaded.shards)
    if (s.name == m.shard) j["dsn"] = pg::display_dsn(s.application_dsn());
  return j;
}

nlohmann::json to_json(const Map& m) {
  return {{"name", m.name}, {"kind", to_text(m.kind)}, {"key_type", to_text(m.key_type)}};
}

nlohmann::json to_json(const Mapping& m) {
  nlohmann::json j = {{"map", m.map}, {"shard", m.shard}, {"status", std::string(to_text(m.status))}};
  if (m.is_point) {
    j["point"] = routing::format_key(*m.range.low);
  } else {
    j["low"] = m.range.low ? nlohmann::json(routing::format_key(*m.range.low)) : nlohmann::json(nullptr);
    j["high"] = m.range.high ? nlohmann::json(routing::format_key(*m.range.high)) : nlohmann::json(nullptr);
    j["range"] = routing::format_range(m.range);
  }
  return j;
}

nlohmann::json to_json(const TableDef& t) {
  return {{"name", t.name},
          {"kind", to_text(t.kind)},
          {"map", t.map ? nlohmann::json(*t.map) : nlohmann::json(nullptr)},
          {"key_column", t.key_column ? nlohmann::json(*t.key_column) : nlohmann::json(nullptr)},
          {"source", t.source ? nlohmann::json(*t.source) : nlohmann::json(nullptr)},
          {"source_dsn", t.source_dsn ? nlohmann::json(pg::display_dsn(*t.source_dsn)) : nlohmann::json(nullptr)}};
}

nlohmann::json to_json(const Xref& x) {
  return {{"name", x.name},
          {"child_table", x.child_table},
          {"child_columns", x.child_columns},
          {"parent_table", x.parent_table},
          {"parent_columns", x.parent_columns},
          {"route_column", x.route_column},
          {"map", x.map}};
}

}  // namespace shardctl::catalog
