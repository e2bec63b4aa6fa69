// The keyset walk of an archive run over the root table's primary key. What a run archives is
// fixed when it starts: the key's upper bound then is recorded per shard, and batches walk
// (cursor, upper] in key order, each one index range scan with a LIMIT (never OFFSET, never a
// scan of the whole table per batch). A row inserted later above the bound waits for the next
// run. Pure SQL text: values are bound as text parameters cast to each column's type.
#pragma once

#include <string>
#include <vector>

namespace shardctl::archive {

struct KeyColumn {
  std::string name;  // raw
  std::string type;  // format_type() of the column, e.g. "bigint", "timestamp with time zone"
};

struct Keyset {
  std::string table;  // quoted, schema-qualified
  std::vector<KeyColumn> key;
  std::string predicate;  // verbatim, validated (predicate.hpp)

  // The key's current maximum: one row of key columns (none when the table is empty).
  std::string upper_bound_sql() const;
  // The last key of the next batch of at most $N rows (the first parameter after the bounds)
  // matching the predicate in (cursor, upper]. Parameters: cursor values (when `has_cursor`),
  // then upper values, then the batch size.
  std::string batch_end_sql(bool has_cursor) const;
  // The WHERE clause of one batch, (cursor, end] and the predicate; parameters numbered from
  // `first` (cursor values when `has_cursor`, then end values).
  std::string batch_filter(bool has_cursor, int first = 1) const;
  // The same WHERE clause with the bounds written as row values of literals (literal_row()):
  // COPY takes no parameters. `low_row` null: no lower bound (the first batch).
  std::string range_filter(const std::string* low_row, const std::string& high_row) const;
  // "('5'::bigint, 'x'::text)" from values already quoted as SQL literals (PQescapeLiteral).
  std::string literal_row(const std::vector<std::string>& quoted_values) const;
  // "(a, b)": the key columns, quoted, as a row value.
  std::string key_row() const;
  std::string key_order() const;       // "a, b" for ORDER BY
  std::string key_order_desc() const;  // "a DESC, b DESC"
};

}  // namespace shardctl::archive
