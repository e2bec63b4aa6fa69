#include "archive/predicate_text.hpp"

#include <vector>

#include "core/utf8.hpp"

namespace shardctl::archive {
namespace {

constexpr std::size_t npos = std::string_view::npos;

bool ascii_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool digit(unsigned char c) { return c >= '0' && c <= '9'; }
// PostgreSQL's ident_start and ident_cont (scan.l): any byte >= 0x80 is a letter to it.
bool ident_start(unsigned char c) { return ascii_letter(c) || c == '_' || c >= 0x80; }
bool ident_cont(unsigned char c) { return ident_start(c) || digit(c) || c == '$'; }
bool dollar_tag_cont(unsigned char c) { return ident_start(c) || digit(c); }

unsigned char at(std::string_view s, std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; }

// Where a string that ends just before `from` goes on: 'a'<newline>'b' is one string in SQL
// (scan.l's quotecontinue: blanks, a line break, any white space, a quote). The index of the
// continuing quote, or npos.
std::size_t continuation(std::string_view s, std::size_t from) {
  std::size_t k = from;
  while (at(s, k) == ' ' || at(s, k) == '\t' || at(s, k) == '\f') ++k;
  if (at(s, k) != '\n' && at(s, k) != '\r') return npos;
  while (k < s.size() && std::string_view(" \t\n\r\f\v").find(s[k]) != npos) ++k;
  return at(s, k) == '\'' ? k : npos;
}

// The index just past the quoted text opened by s[open] (a quote doubled inside stands for
// itself; with `backslash`, as in E'...', a backslash escapes the next byte, in the string's
// continuations too), or npos.
std::size_t past_quoted(std::string_view s, std::size_t open, bool backslash) {
  char q = s[open];
  for (std::size_t j = open + 1; j < s.size(); ++j) {
    if (backslash && s[j] == '\\') {
      ++j;
      continue;
    }
    if (s[j] != q) continue;
    if (at(s, j + 1) == static_cast<unsigned char>(q)) {
      ++j;
      continue;
    }
    if (auto next = backslash ? continuation(s, j + 1) : npos; next != npos) {
      j = next;
      continue;
    }
    return j + 1;
  }
  return npos;
}

}  // namespace

std::size_t characters_in(std::string_view text, std::size_t bytes) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < bytes && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

std::optional<PredicateFlaw> screen_predicate(std::string_view s) {
  auto flaw = [&](std::string what, std::size_t byte) {
    return PredicateFlaw{std::move(what), characters_in(s, byte) + 1};
  };
  if (auto nul = s.find('\0'); nul != npos) return flaw("it contains a NUL byte", nul);
  for (std::size_t i = 0; i < s.size();) {
    auto n = utf8_detail::sequence_length(s, i);
    if (n == 0) return flaw("it is not UTF-8", i);
    i += n;
  }
  if (s.find_first_not_of(" \t\r\n\f\v") == npos) return PredicateFlaw{"it is empty", 0};

  std::vector<std::size_t> open;  // where each '(' not yet closed is
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = at(s, i), next = at(s, i + 1);
    if (s.substr(i, 3) == "\xEF\xBB\xBF") return flaw("it contains a byte order mark (U+FEFF)", i);
    if (c == '-' && next == '-') return flaw("a comment ('--') is not allowed", i);
    if (c == '/' && next == '*') return flaw("a comment ('/*') is not allowed", i);
    if (c == ';') return flaw("';' would end the statement", i);
    if (c == '(') {
      open.push_back(i++);
      continue;
    }
    if (c == ')') {
      if (open.empty()) return flaw("')' closes a parenthesis the predicate did not open", i);
      open.pop_back();
      ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      auto end = past_quoted(s, i, false);
      if (end == npos) return flaw(c == '"' ? "a quoted identifier is never closed" : "a string is never closed", i);
      i = end;
      continue;
    }
    // U&'...' and U&"...": Unicode escapes, written with a backslash that never escapes a quote.
    if ((c == 'u' || c == 'U') && next == '&' && (at(s, i + 2) == '\'' || at(s, i + 2) == '"')) {
      auto end = past_quoted(s, i + 2, false);
      if (end == npos) return flaw(at(s, i + 2) == '"' ? "a quoted identifier is never closed" : "a string is never closed", i);
      i = end;
      continue;
    }
    if (ident_start(c)) {
      std::size_t j = i;
      while (j < s.size() && ident_cont(at(s, j))) ++j;
      if (auto bom = s.substr(i, j - i).find("\xEF\xBB\xBF"); bom != npos)
        return flaw("it contains a byte order mark (U+FEFF)", i + bom);
      // E'...' (backslash escapes), B'...', X'...', N'...': a one-letter prefix glued to a string.
      if (j == i + 1 && at(s, j) == '\'' && std::string_view("eEbBxXnN").find(static_cast<char>(c)) != npos) {
        auto end = past_quoted(s, j, c == 'e' || c == 'E');
        if (end == npos) return flaw("a string is never closed", i);
        i = end;
        continue;
      }
      i = j;
      continue;
    }
    if (c == '$') {
      if (digit(next)) {  // a parameter, $1: the server refuses it
        ++i;
        while (digit(at(s, i))) ++i;
        continue;
      }
      // $$...$$ or $tag$...$tag$ (a tag does not begin with a digit and holds no '$').
      std::size_t j = i + 1;
      if (ident_start(next))
        while (j < s.size() && dollar_tag_cont(at(s, j))) ++j;
      if (at(s, j) == '$') {
        auto tag = s.substr(i, j + 1 - i);
        auto close = s.find(tag, j + 1);
        if (close == npos) return flaw("dollar-quoted text is never closed", i);
        i = close + tag.size();
        continue;
      }
    }
    ++i;
  }
  if (!open.empty()) return flaw("'(' is never closed", open.back());
  return std::nullopt;
}

}  // namespace shardctl::archive
