// The words of shard and mapping statuses: the catalog's columns, JSON and text show them.
#include <optional>
#include <ostream>
#include <string>

#include "catalog/catalog.hpp"
#include "core/error.hpp"

namespace shardctl::catalog {

std::string_view to_text(ShardStatus status) noexcept {
  switch (status) {
    case ShardStatus::online: return "online";
    case ShardStatus::readonly: return "readonly";
    case ShardStatus::offline: return "offline";
  }
  return "online";
}

std::string_view to_text(MappingStatus status) noexcept {
  return status == MappingStatus::offline ? "offline" : "online";
}

std::string_view to_text(TableKind kind) noexcept {
  return kind == TableKind::reference ? "reference" : "sharded";
}

std::ostream& operator<<(std::ostream& out, ShardStatus status) { return out << to_text(status); }
std::ostream& operator<<(std::ostream& out, MappingStatus status) { return out << to_text(status); }
std::ostream& operator<<(std::ostream& out, TableKind kind) { return out << to_text(kind); }

namespace {

std::optional<ShardStatus> shard_status_named(std::string_view word) {
  for (auto s : {ShardStatus::online, ShardStatus::readonly, ShardStatus::offline})
    if (to_text(s) == word) return s;
  return std::nullopt;
}

}  // namespace

ShardStatus shard_status_from_text(std::string_view word) {
  if (auto s = shard_status_named(word)) return *s;
  throw internal_error("unknown shard status '" + std::string(word) + "' in shardctl.shards");
}

MappingStatus mapping_status_from_text(std::string_view word) {
  for (auto s : {MappingStatus::online, MappingStatus::offline})
    if (to_text(s) == word) return s;
  throw internal_error("unknown mapping status '" + std::string(word) + "' in shardctl.mappings");
}

TableKind table_kind_from_text(std::string_view word) {
  for (auto k : {TableKind::sharded, TableKind::reference})
    if (to_text(k) == word) return k;
  throw internal_error("unknown table kind '" + std::string(word) + "' in shardctl.tables");
}

ShardStatus parse_shard_status(std::string_view word) {
  if (auto s = shard_status_named(word)) return *s;
  throw usage_error("unknown shard status '" + std::string(word) + "'", "use online, readonly or offline");
}

}  // namespace shardctl::catalog
