// The three ways `shardctl query` writes its one result: an aligned text table, CSV, or one
// JSON document. All stream: a row is written when it arrives, nothing is kept but what the
// text table's alignment needs (at most `align_rows` rows).
#pragma once

#include <memory>
#include <ostream>

#include "query/query.hpp"

namespace shardctl::query {

// Text: columns separated by two spaces under a header, widths taken from the first
// `align_rows` rows (held back until then); later rows keep those widths and a wider value
// just pushes its line out. NULL prints as an empty cell; tab, CR and LF as \t \r \n.
std::unique_ptr<Sink> text_sink(std::ostream& out, std::size_t align_rows = 1000);

// CSV (RFC 4180): header `shard,<columns>`, then one line per row; NULL is an empty field, an
// empty string is "" (as PostgreSQL's COPY ... (FORMAT csv)). Fields are quoted when they hold a comma, a
// quote, CR or LF, or begin or end with a space.
std::unique_ptr<Sink> csv_sink(std::ostream& out);

// JSON: {"columns":[{"name","type"}...],"rows":[[shard, v1, ...]...],"shards":[{"shard",
// "status","rows","limited","error","elapsed_ms"}...],"offline":[...],"partial":bool}. Values
// of boolean, integer, floating point and numeric columns are JSON booleans and numbers (NaN
// and infinities stay strings), json and jsonb values are embedded as JSON, everything else
// is a string; NULL is null.
std::unique_ptr<Sink> json_sink(std::ostream& out);

// One CSV field, quoted as csv_sink does (exposed for tests).
std::string csv_field(const std::optional<std::string_view>& value);
// One value as csv_sink's JSON rows write it, for a column of type `oid` (exposed for tests).
std::string json_value(const std::optional<std::string_view>& value, unsigned oid);

}  // namespace shardctl::query
