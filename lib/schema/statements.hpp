// The SQL of a migration file as PostgreSQL's lexer sees it: statements split at top-level
// semicolons (so a no-transaction file sends CREATE INDEX CONCURRENTLY on its own, never inside
// an implicit transaction block), and the leading tokens of each statement (so transaction
// control and the indexes a file creates are found without being fooled by comments, strings,
// dollar quotes or quoted identifiers). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::schema {

struct Token {
  enum class Kind {
    word,    // a keyword or unquoted identifier; `text` folded to lower case as PostgreSQL does (ASCII)
    quoted,  // a "quoted identifier"; `text` is the name (doubled quotes undone)
    other,   // a string, number, parameter or operator character; `text` as written
  };
  Kind kind = Kind::other;
  std::string text;
  std::size_t offset = 0;  // byte offset in the text that was split
};

struct Statement {
  std::string sql;         // the statement text without the terminating semicolon
  std::size_t offset = 0;  // byte offset of its first character in the file, for file:line:col
  std::vector<Token> head;  // its first tokens (at most `head_tokens`), comments left out
};
inline constexpr std::size_t head_tokens = 16;

// Lexes as PostgreSQL does with standard_conforming_strings on: 'strings' (with '' escapes),
// E'strings' (with backslash escapes), "identifiers", $tag$ dollar quotes $tag$, -- line
// comments and /* nested */ block comments. A semicolon ends a statement outside parentheses
// and outside the BEGIN ... END body of CREATE [OR REPLACE] FUNCTION|PROCEDURE (as psql
// tracks it, CASE ... END included), so a SQL-standard function body stays one statement.
// Statements that are only whitespace and comments are left out. Text after the last
// semicolon is a statement. psql meta-commands (\set, \i) are not SQL and are not supported.
std::vector<Statement> split_statements(std::string_view sql);

// The transaction control a statement is ("BEGIN", "START TRANSACTION", "COMMIT", "END",
// "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE TRANSACTION"; COMMIT PREPARED and
// ROLLBACK PREPARED / TO SAVEPOINT start with COMMIT or ROLLBACK), or nullopt.
std::optional<std::string> transaction_control(const Statement& st);

// The index a `CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] name ON [ONLY] table`
// statement creates, or nullopt (another statement, or an index without a name).
struct CreatedIndex {
  std::string name;   // as PostgreSQL stores it (folded, unquoted)
  std::string table;  // every part double-quoted, as to_regclass() reads it: "public"."users"
  // Whether the statement can leave the index INVALID and still succeed: CONCURRENTLY (a failed
  // build leaves one), IF NOT EXISTS (keeps one an earlier build left), ON ONLY (a partitioned
  // table's index is INVALID until every partition's is attached). A plain CREATE INDEX in a
  // transaction builds a valid index or fails.
  bool may_stay_invalid = false;
};
std::optional<CreatedIndex> created_index(const Statement& st);

}  // namespace shardctl::schema
