// Shard and mapping statuses and table kinds as text: their word tables are in catalog.hpp.
#include <ostream>
#include <string>

#include "catalog/catalog.hpp"
#include "core/error.hpp"

namespace shardctl::catalog {

std::string_view to_text(ShardStatus status) noexcept { return shard_status_words.text(status); }
std::string_view to_text(MappingStatus status) noexcept { return mapping_status_words.text(status); }
std::string_view to_text(TableKind kind) noexcept { return table_kind_words.text(kind); }

std::ostream& operator<<(std::ostream& out, ShardStatus status) { return out << to_text(status); }
std::ostream& operator<<(std::ostream& out, MappingStatus status) { return out << to_text(status); }
std::ostream& operator<<(std::ostream& out, TableKind kind) { return out << to_text(kind); }

ShardStatus shard_status_from_text(std::string_view word) {
  return shard_status_words.read(word, "shard status", "shardctl.shards");
}

MappingStatus mapping_status_from_text(std::string_view word) {
  return mapping_status_words.read(word, "mapping status", "shardctl.mappings");
}

TableKind table_kind_from_text(std::string_view word) {
  return table_kind_words.read(word, "table kind", "shardctl.tables");
}

ShardStatus parse_shard_status(std::string_view word) {
  if (auto s = shard_status_words.find(word)) return *s;
  throw usage_error("unknown shard status '" + std::string(word) + "'", "use online, readonly or offline");
}

}  // namespace shardctl::catalog
