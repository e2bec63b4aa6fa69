#include "catalog/names.hpp"

#include <cctype>
#include <cstdio>

#include "catalog/sql_keywords.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/utf8.hpp"

namespace shardctl::catalog {
namespace {

// PostgreSQL's NAMEDATALEN - 1: the server would silently truncate a longer name.
constexpr std::size_t max_ident_bytes = 63;

const char* const syntax_hint =
    "write [schema.]table and column as in SQL: a bare name is folded to lower case, a "
    "double-quoted name is kept exactly (\"\" for a quote), e.g. 'Sales.\"Order Lines\"'";

// SQL's whitespace between tokens.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// PostgreSQL's scanner: ident_start [A-Za-z\200-\377_], ident_cont adds [0-9$].
bool ident_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool ident_cont(unsigned char c) { return ident_start(c) || std::isdigit(c) || c == '$'; }

// Reads identifiers from operator input; every error names the whole text.
class Scanner {
 public:
  Scanner(const std::string& text, std::string what) : s_(text), what_(std::move(what)) {
    if (!valid_utf8(s_)) fail("is not valid UTF-8");
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw usage_error(what_ + " '" + printable(s_) + "' " + why, syntax_hint);
  }

  void skip_space() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  bool take(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }

  // One identifier, unquoted (folded) or double-quoted (exact); its raw name.
  std::string ident() {
    skip_space();
    std::string out;
    if (at_end()) fail("has an empty name part");
    if (s_[i_] == '"') {
      auto quoted = read_double_quoted(s_, i_);
      if (!quoted) fail("has an unbalanced double quote");
      out = std::move(*quoted);
      if (out.empty()) fail("has an empty quoted name \"\"");
    } else {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '.' || c == ',' || c == '(' || c == ')') fail("has an empty name part");
      if (std::isdigit(c) || c == '$') fail("has a bare name starting with '" + std::string(1, s_[i_]) + "' (quote it)");
      if (!ident_start(c)) fail("has '" + printable(std::string(1, s_[i_])) + "' where a name should start (quote the name)");
      // Folds ASCII only, as PostgreSQL does for UTF-8: non-ASCII letters keep their case.
      while (i_ < s_.size() && ident_cont(static_cast<unsigned char>(s_[i_])))
        out += (s_[i_] >= 'A' && s_[i_] <= 'Z') ? char(s_[i_] - 'A' + 'a') : s_[i_], ++i_;
    }
    if (out.size() > max_ident_bytes)
      fail("has a name longer than 63 bytes (PostgreSQL's limit): " + printable(out.substr(0, 20)) + "...");
    return out;
  }

  // [schema.]table; public when there is no schema.
  QualifiedName qualified() {
    std::string first = ident();
    if (!take('.')) return {"public", first};
    std::string second = ident();
    skip_space();
    if (peek() == '.') fail("has more than two dotted parts (write [schema.]table)");
    return {first, second};
  }

  void end() {
    skip_space();
    if (at_end()) return;
    if (peek() == '.') fail("has too many dotted parts");
    fail("has unexpected text after the name: '" + printable(s_.substr(i_)) + "'");
  }

 private:
  const std::string& s_;
  std::string what_;
  std::size_t i_ = 0;
};

bool plain_lower(const std::string& s) {
  if (s.empty() || !(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

// Reads one part of a stored name from `i`: a quoted part (strictly) or a bare run up to a dot.
// Returns false when a quoted part is malformed.
bool stored_part(const std::string& s, std::size_t& i, std::string& out) {
  out.clear();
  if (i < s.size() && s[i] == '"') {
    auto quoted = read_double_quoted(s, i);
    if (!quoted) return false;
    out = std::move(*quoted);
    return i == s.size() || s[i] == '.';
  }
  while (i < s.size() && s[i] != '.') out += s[i++];
  return true;
}

// Catalogs written before the identifier syntax could hold a quoted part with a lone quote
// inside ('"a"b"'): split on dots outside quotes and strip the outer quotes, as they did then.
QualifiedName split_legacy(const std::string& s) {
  std::vector<std::string> parts{""};
  bool quoted = false;
  for (char c : s) {
    if (c == '"') quoted = !quoted;
    if (c == '.' && !quoted) {
      parts.emplace_back();
      continue;
    }
    parts.back() += c;
  }
  for (auto& p : parts)
    if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
  if (parts.size() == 1) return {"", parts[0]};
  std::string table = parts.back();
  parts.pop_back();
  std::string schema;
  for (const auto& p : parts) schema += (schema.empty() ? "" : ".") + p;
  return {schema, table};
}

}  // namespace

std::string quote_ident(const std::string& raw) {
  std::string out = "\"";
  for (char c : raw) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void require_name(const std::string& what, const std::string& name) {
  bool ok = !name.empty() && name.size() <= 63 &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  if (!ok)
    throw usage_error("invalid " + what + " name '" + printable(name) + "'",
                      "use a letter or _, then letters, digits, _ . or - (at most 63 characters)");
}

QualifiedName parse_qualified_name(const std::string& text) {
  Scanner sc(text, "table name");
  auto name = sc.qualified();
  sc.end();
  return name;
}

std::string parse_column_name(const std::string& text) {
  Scanner sc(text, "column name");
  auto name = sc.ident();
  sc.skip_space();
  if (sc.peek() == '.') sc.fail("has a dot outside quotes (a column is one name; quote it if the dot is part of it)");
  sc.end();
  return name;
}

std::string display_ident(const std::string& raw) {
  if (plain_lower(raw) && !is_quoted_keyword(raw)) return raw;
  return quote_ident(raw);
}

std::string display_name(const QualifiedName& name) {
  if (name.schema.empty()) return display_ident(name.table);
  return display_ident(name.schema) + "." + display_ident(name.table);
}

std::string qualify_table(const std::string& table) { return display_name(parse_qualified_name(table)); }

QualifiedName split_stored(const std::string& stored) {
  std::size_t i = 0;
  std::string first, second;
  if (!stored_part(stored, i, first)) return split_legacy(stored);
  if (i == stored.size()) return {"", first};
  ++i;  // the dot
  if (!stored_part(stored, i, second) || i != stored.size()) return split_legacy(stored);
  return {first, second};
}

std::string display_stored(const std::string& stored) { return display_name(split_stored(stored)); }

std::string quote_qualified(const std::string& qualified) {
  auto name = split_stored(qualified);
  if (name.schema.empty()) return quote_ident(name.table);
  return quote_ident(name.schema) + "." + quote_ident(name.table);
}

TableColumns parse_table_columns(const std::string& text) {
  Scanner sc(text, "table reference");
  TableColumns out;
  out.table = display_name(sc.qualified());
  if (!sc.take('(')) sc.fail("is not TABLE(COLUMN, ...)");
  do {
    out.columns.push_back(sc.ident());
  } while (sc.take(','));
  if (!sc.take(')')) {
    sc.skip_space();
    if (sc.peek() == '.') sc.fail("has a dotted column name (columns are one name each)");
    sc.fail(sc.at_end() ? "lacks the closing ')'" : "has something other than ',' or ')' after a column");
  }
  sc.end();
  return out;
}

std::string text_array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace shardctl::catalog
