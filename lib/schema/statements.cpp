#include "schema/statements.hpp"

#include <cctype>

namespace shardctl::schema {
namespace {

bool ident_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;
}

// At `i` a '$' starts a dollar quote tag ($$ or $name$)? Returns the tag's length, 0 if not.
std::size_t dollar_tag(std::string_view s, std::size_t i) {
  // $1 is a parameter; a tag cannot start with a digit, and `a$b$` is an identifier.
  if (i > 0 && ident_char(s[i - 1])) return 0;
  std::size_t j = i + 1;
  if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) return 0;
  while (j < s.size() && ident_char(s[j]) && s[j] != '$') ++j;
  if (j < s.size() && s[j] == '$') return j - i + 1;
  return 0;
}

}  // namespace

std::vector<Statement> split_statements(std::string_view s) {
  std::vector<Statement> out;
  bool has_code = false;  // the current statement holds something besides blanks and comments
  std::size_t first_code = 0;
  auto finish = [&](std::size_t end) {
    if (has_code) out.push_back({std::string(s.substr(first_code, end - first_code)), first_code});
    has_code = false;
  };
  auto code_at = [&](std::size_t i) {
    if (!has_code) {
      has_code = true;
      first_code = i;
    }
  };
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
    if (c == ';') {
      finish(i);
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    code_at(i);
    if (c == '\'') {
      // E'...' (or e'...') allows backslash escapes; a standard string only doubles quotes.
      bool escapes = i > 0 && (s[i - 1] == 'E' || s[i - 1] == 'e') && (i < 2 || !ident_char(s[i - 2]));
      ++i;
      while (i < s.size()) {
        if (escapes && s[i] == '\\') {
          i += 2;
          continue;
        }
        if (s[i] == '\'') {
          if (i + 1 < s.size() && s[i + 1] == '\'') {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      ++i;
      continue;
    }
    if (c == '"') {
      ++i;
      while (i < s.size()) {
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      ++i;
      continue;
    }
    if (c == '$') {
      if (auto len = dollar_tag(s, i)) {
        auto tag = s.substr(i, len);
        auto close = s.find(tag, i + len);
        i = close == std::string_view::npos ? s.size() : close + len;
        continue;
      }
    }
    ++i;
  }
  finish(s.size());
  return out;
}

}  // namespace shardctl::schema
