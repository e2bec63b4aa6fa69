// Every shard's copy of the reference tables compared with the source of truth's: a whole-table
// digest per copy first, then chunk by chunk where it differs (plan.hpp says how).
// `check --references` reports it; a move can compare its target with its source through
// compare_pair before it copies anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "refdata/diff.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::refdata {

struct ShardRef {
  std::string name;
  std::string dsn;
};

struct RefTable {
  std::string name;    // display form, e.g. public.product
  std::string quoted;  // SQL form
  std::optional<std::string> source;      // the named source shard; none: the majority copy
  std::optional<std::string> source_dsn;  // or a database outside the fleet
};

// What reports call a source outside the fleet: "outside the fleet (host=... dbname=...)".
std::string outside_source_name(const std::string& dsn);

// How one shard's copy differs from the source's.
struct CopyDiff {
  std::string shard;
  std::int64_t differing_chunks = 0;
  RowDiff rows;
};

// A shard whose copy has other columns or another primary key than the source's (or none):
// never compared row by row.
struct Drift {
  std::string shard;
  std::string detail;
};

struct TableReport {
  std::string table;
  std::string source;         // the copy compared with; empty when undetermined (tie, source down)
  bool source_named = false;  // named in the catalog (or by the caller), not the majority
  bool by_row = false;        // no primary key: rows compared by their whole-row digest
  std::int64_t chunks = 0;    // chunks each copy was cut into
  std::size_t copies = 0;     // copies compared by digest (reachable, same shape)
  std::vector<std::vector<std::string>> tie;  // no majority: the groups of equal copies
  std::vector<CopyDiff> differs;
  std::vector<Drift> drift;
};

struct Unreachable {
  std::string shard;
  std::string error;
  bool refused = false;  // its server was out of connection slots (TooManyConnections)
};

struct FleetReport {
  std::vector<TableReport> tables;
  std::vector<Unreachable> unreachable;
};

// Compares every table's copies on `shards` (`parallel` at once, at most `parallel` connections
// per server), and with
// its source outside the fleet where it has one. A shard (or outside source) that cannot be
// reached is in `unreachable` and compared with nothing; a table whose named source cannot be
// reached has no source. Other errors propagate.
FleetReport compare_fleet(const std::vector<ShardRef>& shards, const std::vector<RefTable>& tables, int parallel);

// A move's question: does `target`'s copy of each table equal `source`'s? The connections must
// have run shardio::session_settings; the report names them `source_name` and `target_name`.
std::vector<TableReport> compare_pair(const std::string& source_name, shardio::RawConn& source,
                                      const std::string& target_name, shardio::RawConn& target,
                                      const std::vector<RefTable>& tables);

}  // namespace shardctl::refdata
