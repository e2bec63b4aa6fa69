// Splits SQL text into statements at top-level semicolons, for files that run outside a
// transaction (each statement is sent on its own, so CREATE INDEX CONCURRENTLY is never inside
// an implicit transaction block). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardctl::schema {

struct Statement {
  std::string sql;         // the statement text without the terminating semicolon
  std::size_t offset = 0;  // byte offset of its first character in the file, for file:line:col
};

// Respects 'strings' (with '' escapes), E'strings' (with backslash escapes), "identifiers",
// $tag$ dollar quotes $tag$, -- line comments and /* nested */ block comments. Statements that
// are only whitespace and comments are left out. Text after the last semicolon is a statement.
// psql meta-commands (\set, \i) are not SQL and are not supported.
std::vector<Statement> split_statements(std::string_view sql);

}  // namespace shardctl::schema
