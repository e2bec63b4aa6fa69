#include "query/statement.hpp"

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "pg/sqlstate.hpp"

namespace shardctl::query {
namespace {

constexpr auto npos = std::string_view::npos;

// PostgreSQL's scanner (scan.l): `space [ \t\n\r\f]`, identifiers start with a letter, `_` or
// any byte from 0x80 and go on with digits and `$` too.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool ident_start(char ch) {
  auto c = static_cast<unsigned char>(ch);
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9') || c == '$'; }

// Past whitespace and comments (`--` to the end of the line, `/* */` nested as the server
// nests them) from `i`; npos inside a comment that never ends.
std::size_t skip_blank(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    if (is_space(s[i])) {
      ++i;
    } else if (s.substr(i, 2) == "--") {
      while (i < s.size() && s[i] != '\n' && s[i] != '\r') ++i;
    } else if (s.substr(i, 2) == "/*") {
      int depth = 0;
      do {
        if (i + 1 >= s.size()) return npos;
        if (s.substr(i, 2) == "/*") ++depth, i += 2;
        else if (s.substr(i, 2) == "*/") --depth, i += 2;
        else ++i;
      } while (depth > 0);
    } else {
      break;
    }
  }
  return i;
}

// The identifier or keyword at `i` (which ident_start), upper-cased as far as it is ASCII.
std::string word_at(std::string_view s, std::size_t i) {
  std::string w;
  for (; i < s.size() && ident_char(s[i]); ++i) w += (s[i] >= 'a' && s[i] <= 'z') ? static_cast<char>(s[i] - 32) : s[i];
  return w;
}

// Past the quoted text whose opening quote is at `i`: 'strings' and "identifiers" end at a
// quote that is not doubled; in E'strings' a backslash escapes the next byte too (query
// parses with standard_conforming_strings on, so only E'' strings have escapes). npos when
// it never ends.
std::size_t skip_quoted(std::string_view s, std::size_t i, bool backslash_escapes) {
  const char quote = s[i++];
  while (i < s.size()) {
    if (backslash_escapes && s[i] == '\\') {
      i += 2;
    } else if (s[i] == quote) {
      if (i + 1 < s.size() && s[i + 1] == quote) i += 2;
      else return i + 1;
    } else {
      ++i;
    }
  }
  return npos;
}

// A dollar-quoted string at `i` ($$...$$ or $tag$...$tag$): past its end, npos when it never
// ends, or `i` itself when no dollar quote starts there (a `$1` parameter, say).
std::size_t skip_dollar_quoted(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  if (j < s.size() && ident_start(s[j]))
    while (j < s.size() && ident_char(s[j]) && s[j] != '$') ++j;
  if (j >= s.size() || s[j] != '$') return i;
  std::string_view tag = s.substr(i, j - i + 1);
  auto end = s.find(tag, j + 1);
  return end == npos ? npos : end + tag.size();
}

[[noreturn]] void refuse(const std::string& what) {
  throw usage_error(what, statement_hint());
}

std::string shown_start(std::string_view s, std::size_t i) {
  if (ident_start(s[i])) return word_at(s, i);
  return printable(s.substr(i, 1));
}

bool begins_select(const std::string& word) {
  return word == "SELECT" || word == "WITH" || word == "VALUES" || word == "TABLE" || word == "(";
}

// The first word at `i` (after blanks): a keyword upper-cased, "(" or the first character.
std::string first_word(std::string_view s, std::size_t i) {
  if (s[i] == '(') return "(";
  return shown_start(s, i);
}

// Past EXPLAIN's options, `i` just after the word EXPLAIN: `(name [value], ...)` or the older
// `[ANALYZE|ANALYSE] [VERBOSE]`. npos when the option list cannot be read.
std::size_t past_explain_options(std::string_view s, std::size_t i) {
  i = skip_blank(s, i);
  if (i == npos || i >= s.size()) return npos;
  if (s[i] != '(') {
    std::string w = ident_start(s[i]) ? word_at(s, i) : "";
    if (w == "ANALYZE" || w == "ANALYSE") {
      i = skip_blank(s, i + w.size());
      if (i == npos || i >= s.size()) return npos;
      w = ident_start(s[i]) ? word_at(s, i) : "";
    }
    if (w == "VERBOSE") i += w.size();
    return i;
  }
  // Option names, values (words, numbers, strings) and commas, up to the closing parenthesis;
  // the grammar allows no parenthesis inside.
  ++i;
  while (true) {
    i = skip_blank(s, i);
    if (i == npos || i >= s.size()) return npos;
    char c = s[i];
    if (c == ')') return i + 1;
    if (c == '(') return npos;
    if (c == '\'' || c == '"') {
      i = skip_quoted(s, i, false);
    } else if (c == '$') {
      auto end = skip_dollar_quoted(s, i);
      i = end == i ? i + 1 : end;
    } else if (ident_start(c)) {
      std::string w = word_at(s, i);
      i += w.size();
      // E'...' escapes with backslashes; U&'...' and U&"..." do not escape their quotes.
      if (w == "E" && i < s.size() && s[i] == '\'') i = skip_quoted(s, i, true);
      else if (w == "U" && s.substr(i, 2) == "&'") i = skip_quoted(s, i + 1, false);
      else if (w == "U" && s.substr(i, 2) == "&\"") i = skip_quoted(s, i + 1, false);
    } else {
      ++i;
    }
    if (i == npos) return npos;
  }
}

}  // namespace

std::string statement_hint() {
  return "query runs one " + std::string(accepted_statements) +
         " statement, EXPLAIN of the first four only; see shardctl-query(1)";
}

std::string statement_text(std::string_view sql) {
  if (sql.substr(0, 3) == "\xEF\xBB\xBF") sql.remove_prefix(3);
  if (sql.find('\0') != npos)
    throw usage_error("the statement holds a NUL byte", "PostgreSQL statements cannot hold one; was a binary file read?");
  if (!valid_utf8(sql)) throw usage_error("the statement is not valid UTF-8: " + printable(sql.substr(0, 200)));
  if (sql.find_first_not_of(" \t\r\n\f;") == npos) throw usage_error("the statement is empty");
  return std::string(sql);
}

Shape read_shape(std::string_view sql) {
  auto i = skip_blank(sql, 0);
  if (i == npos) refuse("the statement does not parse: a /* comment is never closed");
  if (i >= sql.size()) refuse("the statement is only a comment");
  Shape shape;
  shape.first_word = first_word(sql, i);
  if (begins_select(shape.first_word)) return shape;
  if (shape.first_word == "SHOW") {
    shape.kind = StatementKind::show;
    return shape;
  }
  if (shape.first_word != "EXPLAIN")
    refuse("the statement begins with " + shape.first_word + ", not with " + std::string(accepted_statements));
  shape.kind = StatementKind::explain;
  auto j = past_explain_options(sql, i + shape.first_word.size());
  if (j != npos) j = skip_blank(sql, j);
  if (j == npos || j >= sql.size()) refuse("the statement is an EXPLAIN whose options or statement cannot be read");
  std::string explained = first_word(sql, j);
  if (!begins_select(explained))
    refuse("the statement is an EXPLAIN of " + explained + ", not of a SELECT, WITH, VALUES or TABLE statement");
  shape.explained = j;
  return shape;
}

std::string select_check_sql(std::string_view select) {
  return "DECLARE shardctl_query_check CURSOR FOR " + std::string(select);
}

std::string select_refusal(const Shape& shape, std::string_view sqlstate, std::string_view server_message) {
  std::string what = shape.kind == StatementKind::explain ? "the statement EXPLAIN explains" : "the statement";
  if (sqlstate == pg::sqlstate::feature_not_supported && server_message.find("data-modifying") != npos)
    return what + " modifies data (its WITH holds an INSERT, UPDATE, DELETE or MERGE), not a read";
  if (server_message.find("INTO") != npos && server_message.find("not allowed") != npos)
    return what + " is a SELECT INTO, which creates a table, not a read";
  return what + " is not one SELECT, WITH, VALUES or TABLE statement: " + std::string(server_message);
}

}  // namespace shardctl::query
