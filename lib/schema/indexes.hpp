// INVALID indexes on a shard (pg_index.indisvalid = false): what a failed or interrupted
// CREATE INDEX CONCURRENTLY leaves. They are maintained on every write and never used, and
// `CREATE INDEX ... IF NOT EXISTS` skips them, so a rollout reports them with the DROP to run.
#pragma once

#include <vector>

#include "schema/files.hpp"
#include "schema/plan.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::schema {

// Every INVALID index of the shard's database (indexes of partitioned tables left out: theirs
// are invalid by design until every partition has one).
std::vector<InvalidIndex> invalid_indexes(shardio::RawConn& conn);

// The INVALID indexes found where the files' named CREATE INDEX statements put theirs: an
// index of that name on that table (resolved with the session's search_path), or of that name
// anywhere when the table is not found. Each names the first file that creates it.
std::vector<InvalidIndex> invalid_file_indexes(shardio::RawConn& conn, const std::vector<Migration>& files);

}  // namespace shardctl::schema
