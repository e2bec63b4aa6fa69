// Which statements `shardctl query` runs: one SELECT, WITH, VALUES or TABLE statement (a
// "select"), a SHOW, or an EXPLAIN of a select. This part is pure: it checks the text and reads
// its leading words by the server's own lexical rules (whitespace, `--` and nested `/* */`
// comments, quoted strings and identifiers). Reading words is enough to refuse (no statement
// the server could take for a select begins with COPY); to accept, the shard's server must
// agree, and shard_reader asks it (see select_check_sql).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace shardctl::query {

// The statement as it is sent: a leading UTF-8 byte order mark (an editor's, in a file read
// from stdin) removed. Usage Error for an empty statement, a NUL byte (libpq would send only
// the text before it) or bytes that are not UTF-8.
std::string statement_text(std::string_view sql);

enum class StatementKind {
  select,   // begins with SELECT, WITH, VALUES, TABLE or "(": the server must confirm
  show,     // SHOW: the only statement the grammar begins with SHOW
  explain,  // EXPLAIN [options]: the explained statement must be a select
};

struct Shape {
  StatementKind kind = StatementKind::select;
  std::string first_word;  // upper-cased: "SELECT", "(", "EXPLAIN"
  // explain: where the explained statement begins (after EXPLAIN and its options);
  // otherwise 0.
  std::size_t explained = 0;
};

// The statement's shape. Usage Error naming the first word when no select, SHOW or EXPLAIN
// can begin that way (COPY, CALL, DO, DELETE, ...), and for an EXPLAIN whose options cannot be
// read. Expects statement_text's result.
Shape read_shape(std::string_view sql);

// The statement whose successful parse on the server proves `select` (a statement read_shape
// calls a select, or the statement an EXPLAIN explains) is one plain select: DECLARE ...
// CURSOR FOR takes a SELECT, WITH, VALUES or TABLE statement only, and its parse analysis
// refuses SELECT INTO and WITH holding INSERT, UPDATE, DELETE or MERGE. Preparing it executes
// nothing.
std::string select_check_sql(std::string_view select);

// The usage message for a statement the server would not take as a select, from the SQLSTATE
// and message its select_check_sql parse failed with.
std::string select_refusal(const Shape& shape, std::string_view sqlstate, std::string_view server_message);

// The statements query runs, for messages.
inline constexpr std::string_view accepted_statements = "SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN";

// The hint of every statement refusal.
std::string statement_hint();

}  // namespace shardctl::query
