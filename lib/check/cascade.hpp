// Taking bad rows out of a shard together with the rows that reference them through foreign
// keys (discovered from pg_catalog, recursively), in one transaction: into schema
// shardctl_quarantine (restorable) or deleted. And putting quarantined rows back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardio/raw_conn.hpp"
#include "shardside/names.hpp"

namespace shardctl::check {

inline constexpr const char* quarantine_schema = shardside::quarantine_schema;

// The rows to take out: `predicate` selects them from `quoted_table` under the alias t0 and
// may use the text parameters `params` ($1, $2, ...).
struct RowSet {
  std::string quoted_table;
  std::string predicate;
  std::vector<std::string> params;
};

struct TableRows {
  std::string table;  // schema.table
  std::int64_t rows = 0;
};

enum class Removal { quarantine, remove };

// Moves (quarantine) or deletes (remove) the rows and their FK descendants, children first,
// one transaction per batch of at most `batch_rows` root rows (0: all in one). With `dry_run`,
// only counts what it would take. Returns rows per table, the root table first.
// `before_batch`, when set, runs before each batch picks its rows (the sweep re-reads the
// catalog there and throws to stop when operations changed under it).
// A table without a primary key identifies its rows by ctid, locked when picked.
std::vector<TableRows> take_out(shardio::RawConn& conn, const RowSet& rows, Removal how, bool dry_run,
                                int batch_rows, const std::function<void()>& before_batch = {});

// Puts every quarantined row of this shard back into its table (parents first), in one
// transaction, and drops the quarantine schema. With `dry_run`, only counts. Stored generated
// columns are recomputed; identity columns get their quarantined values back.
std::vector<TableRows> restore_quarantine(shardio::RawConn& conn, bool dry_run);

}  // namespace shardctl::check
