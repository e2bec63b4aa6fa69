#include "schema/statements.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace shardctl::schema {
namespace {

bool ident_start(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool ident_cont(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$'; }

std::string ascii_lower(std::string_view w) {
  std::string out(w);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string ascii_upper(std::string_view w) {
  std::string out(w);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// Length of the dollar-quote delimiter ($$ or $tag$) starting at s[i] == '$', 0 if none: $1 is
// a parameter (a tag cannot start with a digit). Identifiers swallow their own '$' (`a$b$`), so
// a '$' reached here never continues one.
std::size_t dollar_delimiter(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  if (j < s.size() && s[j] == '$') return 2;
  if (j >= s.size() || !ident_start(s[j])) return 0;
  ++j;
  while (j < s.size() && (ident_start(s[j]) || std::isdigit(static_cast<unsigned char>(s[j])))) ++j;
  if (j < s.size() && s[j] == '$') return j - i + 1;
  return 0;
}

// End (one past the closing quote) of the string literal whose opening quote is at s[i].
std::size_t string_end(std::string_view s, std::size_t i, bool backslash_escapes) {
  ++i;
  while (i < s.size()) {
    if (backslash_escapes && s[i] == '\\') {
      i += 2;
      continue;
    }
    if (s[i] == '\'') {
      if (i + 1 < s.size() && s[i + 1] == '\'') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    ++i;
  }
  return s.size();
}

// psql's heuristic for SQL-standard routine bodies (psqlscan.l): the statement begins with
// CREATE [OR REPLACE] FUNCTION|PROCEDURE; then, outside parentheses, BEGIN opens a block that
// END closes, and CASE inside such a block also ends with END.
class RoutineBody {
 public:
  void word(const std::string& w, int paren_depth) {
    if (count_ < first_.size() && (w == "create" || w == "function" || w == "procedure" || w == "or" || w == "replace"))
      first_[count_] = w[0];
    ++count_;
    bool routine = first_[0] == 'c' && (first_[1] == 'f' || first_[1] == 'p' ||
                                        (first_[1] == 'o' && first_[2] == 'r' && (first_[3] == 'f' || first_[3] == 'p')));
    if (!routine || paren_depth != 0) return;
    if (w == "begin") ++depth_;
    else if (w == "case" && depth_ >= 1) ++depth_;
    else if (w == "end" && depth_ > 0) --depth_;
  }
  bool inside() const noexcept { return depth_ > 0; }

 private:
  std::array<char, 4> first_{};
  std::size_t count_ = 0;
  int depth_ = 0;
};

// Splits a text into statements, one lexical element at a time (split_statements): blanks and
// comments are skipped, a top-level semicolon ends the statement, every other element is a
// token of the current statement.
class Splitter {
 public:
  explicit Splitter(std::string_view s) : s_(s) {}

  std::vector<Statement> run() {
    while (i_ < s_.size()) next();
    finish(s_.size());
    return std::move(out_);
  }

 private:
  // The element at i_, by its first character(s).
  void next() {
    char c = s_[i_];
    if (c == '-' && at(i_ + 1, '-')) skip_line_comment();
    else if (c == '/' && at(i_ + 1, '*')) skip_block_comment();
    else if (std::isspace(static_cast<unsigned char>(c))) ++i_;
    else if (c == ';' && paren_ == 0 && !body_.inside()) end_statement();
    else if (ident_start(c)) word_or_escape_string();
    else if (c == '\'') string_literal();
    else if (c == '"') quoted_identifier();
    else if (c == '$' && dollar_quoted()) return;
    else if (std::isdigit(static_cast<unsigned char>(c)) || c == '$') number_or_parameter();
    else punctuation();
  }

  bool at(std::size_t k, char c) const { return k < s_.size() && s_[k] == c; }

  void skip_line_comment() {
    auto nl = s_.find('\n', i_);
    i_ = nl == std::string_view::npos ? s_.size() : nl + 1;
  }

  // /* ... */, nested as PostgreSQL nests them.
  void skip_block_comment() {
    int depth = 1;
    i_ += 2;
    while (i_ < s_.size() && depth > 0) {
      if (s_[i_] == '/' && at(i_ + 1, '*')) {
        ++depth;
        i_ += 2;
      } else if (s_[i_] == '*' && at(i_ + 1, '/')) {
        --depth;
        i_ += 2;
      } else {
        ++i_;
      }
    }
  }

  void end_statement() {
    finish(i_);
    ++i_;
  }

  // A keyword or identifier, folded to lower case; E'...' (or e'...') is one token instead: a
  // string with backslash escapes.
  void word_or_escape_string() {
    std::size_t start = i_;
    std::size_t j = i_ + 1;
    while (j < s_.size() && ident_cont(s_[j])) ++j;
    if (j == i_ + 1 && (s_[i_] == 'E' || s_[i_] == 'e') && at(j, '\'')) {
      i_ = string_end(s_, j, true);
      token(Token::Kind::other, brief(start, i_), start);
      return;
    }
    auto w = ascii_lower(s_.substr(i_, j - i_));
    body_.word(w, paren_);
    token(Token::Kind::word, std::move(w), start);
    i_ = j;
  }

  void string_literal() {
    std::size_t start = i_;
    i_ = string_end(s_, i_, false);
    token(Token::Kind::other, brief(start, i_), start);
  }

  // "a ""quoted"" identifier": its name, doubled quotes undone.
  void quoted_identifier() {
    std::size_t start = i_;
    std::string name;
    ++i_;
    while (i_ < s_.size()) {
      if (s_[i_] == '"') {
        if (at(i_ + 1, '"')) {
          name += '"';
          i_ += 2;
          continue;
        }
        ++i_;
        break;
      }
      if (name.size() < 256) name += s_[i_];
      ++i_;
    }
    token(Token::Kind::quoted, std::move(name), start);
  }

  // $$ ... $$ or $tag$ ... $tag$, one token; false when the '$' opens no dollar quote.
  bool dollar_quoted() {
    auto len = dollar_delimiter(s_, i_);
    if (!len) return false;
    std::size_t start = i_;
    auto close = s_.find(s_.substr(i_, len), i_ + len);
    i_ = close == std::string_view::npos ? s_.size() : close + len;
    token(Token::Kind::other, brief(start, i_), start);
    return true;
  }

  // A number (1, 1.5, 1e10) or a parameter ($1).
  void number_or_parameter() {
    std::size_t start = i_;
    std::size_t j = i_ + 1;
    while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_' || s_[j] == '.')) ++j;
    i_ = j;
    token(Token::Kind::other, brief(start, i_), start);
  }

  // One operator or punctuation character; parentheses are counted (a semicolon inside them
  // ends nothing).
  void punctuation() {
    char c = s_[i_];
    if (c == '(') ++paren_;
    if (c == ')' && paren_ > 0) --paren_;
    token(Token::Kind::other, std::string(1, c), i_);
    ++i_;
  }

  // Ends the current statement at `end` (kept when it holds anything besides blanks and
  // comments) and starts the next.
  void finish(std::size_t end) {
    if (has_code_) {
      cur_.sql = std::string(s_.substr(cur_.offset, end - cur_.offset));
      out_.push_back(std::move(cur_));
    }
    cur_ = Statement{};
    has_code_ = false;
    paren_ = 0;
    body_ = RoutineBody{};
  }

  void token(Token::Kind kind, std::string text, std::size_t at) {
    if (!has_code_) {
      has_code_ = true;
      cur_.offset = at;
    }
    if (cur_.head.size() < head_tokens) cur_.head.push_back({kind, std::move(text), at});
  }

  // What a string, number or long operator token keeps of its text: enough to recognize it.
  std::string brief(std::size_t from, std::size_t to) const {
    return std::string(s_.substr(from, std::min<std::size_t>(to - from, 64)));
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::vector<Statement> out_;
  Statement cur_;
  bool has_code_ = false;  // the current statement holds something besides blanks and comments
  int paren_ = 0;
  RoutineBody body_;
};

}  // namespace

std::vector<Statement> split_statements(std::string_view sql) { return Splitter(sql).run(); }

std::optional<std::string> transaction_control(const Statement& st) {
  if (st.head.empty() || st.head[0].kind != Token::Kind::word) return std::nullopt;
  const auto& w = st.head[0].text;
  std::string second = st.head.size() > 1 && st.head[1].kind == Token::Kind::word ? st.head[1].text : "";
  if (w == "begin" || w == "end" || w == "abort" || w == "savepoint" || w == "release") return ascii_upper(w);
  if (w == "commit" || w == "rollback")
    return ascii_upper(w) + (second == "prepared" || second == "to" ? " " + ascii_upper(second) : "");
  if (w == "start") return "START TRANSACTION";  // the only statement that starts with START
  if (w == "prepare" && second == "transaction") return "PREPARE TRANSACTION";
  return std::nullopt;
}

std::optional<CreatedIndex> created_index(const Statement& st) {
  const auto& t = st.head;
  std::size_t k = 0;
  auto word = [&](const char* w) {
    if (k < t.size() && t[k].kind == Token::Kind::word && t[k].text == w) {
      ++k;
      return true;
    }
    return false;
  };
  auto name = [&]() -> std::optional<std::string> {
    if (k < t.size() && (t[k].kind == Token::Kind::word || t[k].kind == Token::Kind::quoted)) return t[k++].text;
    return std::nullopt;
  };
  auto quoted = [](const std::string& part) {
    std::string out = "\"";
    for (char c : part) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  if (!word("create")) return std::nullopt;
  word("unique");
  if (!word("index")) return std::nullopt;
  bool may_stay_invalid = word("concurrently");
  if (word("if")) {
    if (!(word("not") && word("exists"))) return std::nullopt;
    may_stay_invalid = true;
  }
  if (k < t.size() && t[k].kind == Token::Kind::word && t[k].text == "on") return std::nullopt;  // no name given
  CreatedIndex out;
  auto n = name();
  if (!n || !word("on")) return std::nullopt;
  out.name = *n;
  if (word("only")) may_stay_invalid = true;
  out.may_stay_invalid = may_stay_invalid;
  std::vector<std::string> parts;
  auto first = name();
  if (!first) return std::nullopt;
  parts.push_back(*first);
  while (k < t.size() && t[k].kind == Token::Kind::other && t[k].text == ".") {
    ++k;
    auto next = name();
    if (!next) return std::nullopt;
    parts.push_back(*next);
  }
  if (parts.size() > 3) return std::nullopt;
  // database.schema.table names this database's schema.table (PostgreSQL refuses any other).
  if (parts.size() == 3) parts.erase(parts.begin());
  for (std::size_t p = 0; p < parts.size(); ++p) out.table += (p ? "." : "") + quoted(parts[p]);
  return out;
}

}  // namespace shardctl::schema
