#include "schema/statements.hpp"

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

}  // namespace

std::vector<Statement> split_statements(std::string_view s) {
  std::vector<Statement> out;
  Statement cur;
  bool has_code = false;  // the current statement holds something besides blanks and comments
  int paren = 0;
  RoutineBody body;
  auto finish = [&](std::size_t end) {
    if (has_code) {
      cur.sql = std::string(s.substr(cur.offset, end - cur.offset));
      out.push_back(std::move(cur));
    }
    cur = Statement{};
    has_code = false;
    paren = 0;
    body = RoutineBody{};
  };
  auto token = [&](Token::Kind kind, std::string text, std::size_t at) {
    if (!has_code) {
      has_code = true;
      cur.offset = at;
    }
    if (cur.head.size() < head_tokens) cur.head.push_back({kind, std::move(text), at});
  };
  // What a string, number or long operator token keeps of its text: enough to recognize it.
  auto brief = [&](std::size_t from, std::size_t to) { return std::string(s.substr(from, std::min<std::size_t>(to - from, 64))); };

  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      auto nl = s.find('\n', i);
      i = nl == std::string_view::npos ? s.size() : nl + 1;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      int depth = 1;
      i += 2;
      while (i < s.size() && depth > 0) {
        if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
          ++depth;
          i += 2;
        } else if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/') {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == ';' && paren == 0 && !body.inside()) {
      finish(i);
      ++i;
      continue;
    }
    std::size_t start = i;
    if (ident_start(c)) {
      std::size_t j = i + 1;
      while (j < s.size() && ident_cont(s[j])) ++j;
      // E'...' (or e'...') is one token: a string with backslash escapes.
      if (j == i + 1 && (c == 'E' || c == 'e') && j < s.size() && s[j] == '\'') {
        i = string_end(s, j, true);
        token(Token::Kind::other, brief(start, i), start);
        continue;
      }
      auto w = ascii_lower(s.substr(i, j - i));
      body.word(w, paren);
      token(Token::Kind::word, std::move(w), start);
      i = j;
      continue;
    }
    if (c == '\'') {
      i = string_end(s, i, false);
      token(Token::Kind::other, brief(start, i), start);
      continue;
    }
    if (c == '"') {
      std::string name;
      ++i;
      while (i < s.size()) {
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            name += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (name.size() < 256) name += s[i];
        ++i;
      }
      token(Token::Kind::quoted, std::move(name), start);
      continue;
    }
    if (c == '$') {
      if (auto len = dollar_delimiter(s, i)) {
        auto delimiter = s.substr(i, len);
        auto close = s.find(delimiter, i + len);
        i = close == std::string_view::npos ? s.size() : close + len;
        token(Token::Kind::other, brief(start, i), start);
        continue;
      }
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '$') {
      // A number (1, 1.5, 1e10) or a parameter ($1).
      std::size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
      i = j;
      token(Token::Kind::other, brief(start, i), start);
      continue;
    }
    if (c == '(') ++paren;
    if (c == ')' && paren > 0) --paren;
    token(Token::Kind::other, std::string(1, c), start);
    ++i;
  }
  finish(s.size());
  return out;
}

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
  word("concurrently");
  if (word("if") && !(word("not") && word("exists"))) return std::nullopt;
  if (k < t.size() && t[k].kind == Token::Kind::word && t[k].text == "on") return std::nullopt;  // no name given
  CreatedIndex out;
  auto n = name();
  if (!n || !word("on")) return std::nullopt;
  out.name = *n;
  word("only");
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
