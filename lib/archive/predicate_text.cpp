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

// The byte order mark U+FEFF in UTF-8.
constexpr std::string_view bom{"\xEF\xBB\xBF"};

PredicateFlaw flaw_at(std::string_view s, std::string what, std::size_t byte) {
  return PredicateFlaw{std::move(what), characters_in(s, byte) + 1};
}

// What the text must be before any token is read: text (no NUL byte, UTF-8), and not blank.
std::optional<PredicateFlaw> screen_bytes(std::string_view s) {
  if (auto nul = s.find('\0'); nul != npos) return flaw_at(s, "it contains a NUL byte", nul);
  for (std::size_t i = 0; i < s.size();) {
    auto n = utf8_detail::sequence_length(s, i);
    if (n == 0) return flaw_at(s, "it is not UTF-8", i);
    i += n;
  }
  if (s.find_first_not_of(" \t\r\n\f\v") == npos) return PredicateFlaw{"it is empty", 0};
  return std::nullopt;
}

// What begins at a byte of the text, as far as the screen cares.
enum class PredicateToken {
  bom,             // U+FEFF, anywhere
  comment,         // -- or /*
  semicolon,
  open_paren,
  close_paren,
  quoted,          // '...' or "..."
  unicode_quoted,  // U&'...' or U&"...": Unicode escapes, whose backslash never escapes a quote
  word,            // a keyword or identifier, or a one-letter prefix glued to a string (E'...')
  dollar,          // $1, $$...$$, $tag$...$tag$, or a lone '$'
  other,           // an operator, a digit, white space: one byte
};

PredicateToken token_at(std::string_view s, std::size_t i) {
  unsigned char c = at(s, i), next = at(s, i + 1);
  if (s.substr(i, bom.size()) == bom) return PredicateToken::bom;
  if ((c == '-' && next == '-') || (c == '/' && next == '*')) return PredicateToken::comment;
  if (c == ';') return PredicateToken::semicolon;
  if (c == '(') return PredicateToken::open_paren;
  if (c == ')') return PredicateToken::close_paren;
  if (c == '\'' || c == '"') return PredicateToken::quoted;
  if ((c == 'u' || c == 'U') && next == '&' && (at(s, i + 2) == '\'' || at(s, i + 2) == '"'))
    return PredicateToken::unicode_quoted;
  if (ident_start(c)) return PredicateToken::word;
  if (c == '$') return PredicateToken::dollar;
  return PredicateToken::other;
}

// Reads the text token by token, keeping the parentheses still open; the first flaw ends it.
class PredicateLexer {
 public:
  explicit PredicateLexer(std::string_view s) : s_(s) {}

  std::optional<PredicateFlaw> run() {
    while (i_ < s_.size())
      if (auto flaw = token()) return flaw;
    if (!open_.empty()) return flaw_at(s_, "'(' is never closed", open_.back());
    return std::nullopt;
  }

 private:
  using Flaw = std::optional<PredicateFlaw>;

  // The token at i_: moves past it, or returns its flaw.
  Flaw token() {
    switch (token_at(s_, i_)) {
      case PredicateToken::bom: return flaw_at(s_, "it contains a byte order mark (U+FEFF)", i_);
      case PredicateToken::comment:
        return flaw_at(s_, s_[i_] == '-' ? "a comment ('--') is not allowed" : "a comment ('/*') is not allowed", i_);
      case PredicateToken::semicolon: return flaw_at(s_, "';' would end the statement", i_);
      case PredicateToken::open_paren: open_.push_back(i_++); return std::nullopt;
      case PredicateToken::close_paren: return close_paren();
      case PredicateToken::quoted: return quoted(i_);
      case PredicateToken::unicode_quoted: return quoted(i_ + 2);
      case PredicateToken::word: return word();
      case PredicateToken::dollar: return dollar();
      case PredicateToken::other: ++i_; return std::nullopt;
    }
    return std::nullopt;
  }

  Flaw close_paren() {
    if (open_.empty()) return flaw_at(s_, "')' closes a parenthesis the predicate did not open", i_);
    open_.pop_back();
    ++i_;
    return std::nullopt;
  }

  // A string or quoted identifier whose quote is at `quote` (the token begins at i_); no
  // backslash escapes.
  Flaw quoted(std::size_t quote) {
    auto end = past_quoted(s_, quote, false);
    if (end == npos) return flaw_at(s_, s_[quote] == '"' ? "a quoted identifier is never closed" : "a string is never closed", i_);
    i_ = end;
    return std::nullopt;
  }

  Flaw word() {
    std::size_t j = i_;
    while (j < s_.size() && ident_cont(at(s_, j))) ++j;
    if (auto b = s_.substr(i_, j - i_).find(bom); b != npos) return flaw_at(s_, "it contains a byte order mark (U+FEFF)", i_ + b);
    // E'...' (backslash escapes), B'...', X'...', N'...': a one-letter prefix glued to a string.
    char c = s_[i_];
    if (j == i_ + 1 && at(s_, j) == '\'' && std::string_view("eEbBxXnN").find(c) != npos) {
      auto end = past_quoted(s_, j, c == 'e' || c == 'E');
      if (end == npos) return flaw_at(s_, "a string is never closed", i_);
      j = end;
    }
    i_ = j;
    return std::nullopt;
  }

  Flaw dollar() {
    unsigned char next = at(s_, i_ + 1);
    if (digit(next)) {  // a parameter, $1: the server refuses it
      ++i_;
      while (digit(at(s_, i_))) ++i_;
      return std::nullopt;
    }
    // $$...$$ or $tag$...$tag$ (a tag does not begin with a digit and holds no '$').
    std::size_t j = i_ + 1;
    if (ident_start(next))
      while (j < s_.size() && dollar_tag_cont(at(s_, j))) ++j;
    if (at(s_, j) != '$') {  // a lone '$'
      ++i_;
      return std::nullopt;
    }
    auto tag = s_.substr(i_, j + 1 - i_);
    auto close = s_.find(tag, j + 1);
    if (close == npos) return flaw_at(s_, "dollar-quoted text is never closed", i_);
    i_ = close + tag.size();
    return std::nullopt;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::vector<std::size_t> open_;  // where each '(' not yet closed is
};

}  // namespace

std::size_t characters_in(std::string_view text, std::size_t bytes) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < bytes && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

std::optional<PredicateFlaw> screen_predicate(std::string_view s) {
  if (auto flaw = screen_bytes(s)) return flaw;
  return PredicateLexer(s).run();
}

}  // namespace shardctl::archive
