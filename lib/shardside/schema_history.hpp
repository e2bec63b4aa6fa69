// shardctl.schema_history on a shard (sql/schema_history.sql): the table `shardctl schema`
// records its attempts in (lib/schema/history.hpp reads and writes its rows).
#pragma once

#include "shardio/raw_conn.hpp"

namespace shardctl::shardside {

// Creates the table (and schema shardctl) if missing, and brings a table of the first shape
// (success NOT NULL, no note) to the current one (sql/schema_history_2.sql), with an ALTER TABLE
// only when needed, so a current table is never locked for it. Run under the rollout lock.
void ensure_schema_history(shardio::RawConn& conn);

}  // namespace shardctl::shardside
