// `shardctl table sync-reference`: every shard's copy of the reference tables made identical to
// the source's by changing only the rows of the chunks that differ.
//
// Per target shard, one transaction: the tables are locked against writers (EXCLUSIVE: reads go
// on), read on the source under one REPEATABLE READ snapshot, and compared chunk by chunk; the
// source's rows of each differing chunk are copied into a temporary table; then, over the tables
// in foreign-key order, rows are inserted (parents first), updated (parents first) and deleted
// (children first), and each table's chunk digests are compared with the source's again before
// the commit. A row about to be deleted that a table outside the synced set still references
// (a sharded table's row, or a reference table not being synced) refuses the shard: nothing
// changes there. With dry_run, the same transaction runs without the locks and is rolled back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "refdata/compare.hpp"

namespace shardctl::refdata {

struct SyncOptions {
  std::optional<std::string> from;  // the source shard of every table (else each table's own, else the majority)
  bool dry_run = false;
  bool allow_no_pk = false;         // replace a differing table without a primary key whole
  int parallel = 4;
};

struct TableChange {
  std::string table;
  std::string source;
  std::vector<std::string> inserted, updated, deleted;  // keys as row text (row hashes without a key)
  bool replaced = false;                                // no primary key: the whole table replaced
};

struct ShardSync {
  std::string shard;
  std::vector<TableChange> changes;  // tables that differed
  std::string refused;               // why nothing changed on this shard (exit 64)
  std::string unreachable;           // the error when it (or its source) could not be reached (exit 69)
};

struct SyncReport {
  bool dry_run = false;
  std::vector<ShardSync> shards;
};

// `shards`: every shard holding copies (the sources among them); `tables`: the tables to sync.
// A usage Error (64) before anything changes when a table has no source: its copies tie and
// none is named; an unavailable Error (69) when a source cannot be reached.
SyncReport sync_references(const std::vector<ShardRef>& shards, const std::vector<RefTable>& tables,
                           const SyncOptions& options);

}  // namespace shardctl::refdata
