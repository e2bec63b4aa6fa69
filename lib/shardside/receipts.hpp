// shardctl.archive_receipts on a shard that archive runs delete from (sql/archive_receipts.sql):
// the source commits one row per batch together with the batch's DELETE, so a resumed run
// knows whether an interrupted batch's rows already left the shard.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardside {

struct ArchiveReceipt {
  std::string tables;  // JSON: what the batch deleted, per table
  std::int64_t refused = 0;
};

// Creates the table (and schema shardctl) if missing.
void ensure_archive_receipts(shardio::RawConn& shard);

// The batch's receipt, if its DELETE committed. The table must exist (ensure_archive_receipts).
std::optional<ArchiveReceipt> archive_receipt(shardio::RawConn& shard, const std::string& run, int batch_no);

// In the caller's transaction (the one that deletes the batch's rows).
void insert_archive_receipt(shardio::RawConn& shard, const std::string& run, int batch_no, const ArchiveReceipt& receipt);

// Deletes the run's receipts, if the shard has the table.
void drop_archive_receipts(shardio::RawConn& shard, const std::string& run);

}  // namespace shardctl::shardside
