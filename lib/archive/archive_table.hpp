// The table a postgres: destination keeps for one source table: the same schema-qualified name
// in the archive database, the source's columns with their types (values only: no defaults,
// identity or constraints, which belong to live data), plus `source_shard` and `archived_at`.
// A batch is delivered idempotently by (source_shard, archived_at): the batch's timestamp is
// journaled before delivery, so a redelivery first removes what an interrupted one left.
#pragma once

#include <string>
#include <vector>

#include "shardio/shard_schema.hpp"

namespace shardctl::archive {

inline constexpr const char* source_shard_column = "source_shard";
inline constexpr const char* archived_at_column = "archived_at";

// CREATE SCHEMA/TABLE IF NOT EXISTS statements, and the index delivery deletes by.
std::vector<std::string> archive_table_ddl(const std::string& schema, const std::string& table,
                                           const std::vector<shardio::Column>& source);

// CREATE TABLE for the archived columns alone, as the manifest of a dir: run records it: what an
// operator needs to load a file into an empty database with `zstd -dc FILE | psql -c "COPY ..."`.
std::string source_table_ddl(const std::string& schema, const std::string& table,
                             const std::vector<shardio::Column>& source);

// The destination's columns must be the source's, in order and type, then the two archive
// columns. Usage Error (64) naming the first difference; `shown` names the table.
void require_matching_columns(const std::vector<shardio::Column>& source, const std::vector<shardio::Column>& dest,
                              const std::string& shown);

}  // namespace shardctl::archive
