// Schema shardctl_quarantine on a shard (sql/quarantine.sql): where `check --fix` puts rows it
// takes out, one table per source table, listed in the manifest, until `check --restore`.
// What goes in and comes back out, with which foreign keys, is lib/check/cascade's business.
#pragma once

#include <string>
#include <vector>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardside {

// A manifest row: the table `quarantine_table` (unquoted, "schema.table") of schema
// shardctl_quarantine holds rows taken out of source_schema.source_table.
struct QuarantinedTable {
  std::string quarantine_table;
  std::string source_schema;
  std::string source_table;
};

// In the caller's transaction: the schema and its manifest, if missing.
void ensure_quarantine(shardio::RawConn& shard);

// In the caller's transaction: lists a quarantine table in the manifest (once).
void record_quarantined(shardio::RawConn& shard, const QuarantinedTable& table);

// The manifest, by quarantine table; empty when the shard has none.
std::vector<QuarantinedTable> quarantine_manifest(shardio::RawConn& shard);

// In the caller's transaction: drops the schema with everything in it.
void drop_quarantine(shardio::RawConn& shard);

}  // namespace shardctl::shardside
