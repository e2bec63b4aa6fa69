#include "config/toml_nesting.hpp"

#include <vector>

namespace shardctl::config {
namespace {

// A character of a bare key. Bytes of UTF-8 sequences count too: TOML 1.0 does not allow them
// in bare keys, but counting them as key parts can only make the measure deeper, never shallower.
bool bare_key_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' || u == '-' || u >= 0x80;
}

class DepthScanner {
 public:
  DepthScanner(std::string_view text, int max_depth) : t_(text), max_(max_depth) {}

  std::size_t too_deep_at() {
    bool expect_key = true;  // at the start of an expression, or after '{' or ',' in an inline table
    int value_depth = 0;     // the depth of the next value
    // toml++ skips a UTF-8 byte order mark; here it would hide a [header] on the first line.
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (c == '\n') {
        ++i_;
        if (open_.empty()) expect_key = true;  // arrays may span lines; expressions may not
      } else if (expect_key && open_.empty() && c == '[') {
        // [a.b.c] is a table 3 levels down; [[a.b]] an array whose tables are 3 levels down.
        bool array = i_ + 1 < t_.size() && t_[i_ + 1] == '[';
        std::size_t header = i_;
        i_ += array ? 2 : 1;
        int parts = 0;
        if (auto deep = key(0, parts); deep != npos) return deep;
        table_depth_ = parts + (array ? 1 : 0);
        if (table_depth_ > max_) return header;
        expect_key = false;  // the rest of the line: "]" or "]]", a comment
      } else if (expect_key && c != '}' && c != ',' && c != ']') {
        int base = open_.empty() ? table_depth_ : open_.back().depth;
        int parts = 0;
        if (auto deep = key(base, parts); deep != npos) return deep;
        if (parts == 0) {
          ++i_;  // not a key: toml++ will say what it is
        } else {
          value_depth = base + parts;
          skip_blanks();
          if (i_ < t_.size() && t_[i_] == '=') ++i_;
        }
        expect_key = false;
      } else if (c == '[' || c == '{') {
        if (value_depth > max_) return i_;
        open_.push_back({c, value_depth});
        ++i_;
        if (c == '[') value_depth = open_.back().depth + 1;
        else expect_key = true;
      } else if (c == ']' || c == '}') {
        if (!open_.empty()) open_.pop_back();
        ++i_;
        if (!open_.empty() && open_.back().kind == '[') value_depth = open_.back().depth + 1;
        expect_key = false;
      } else if (c == ',') {
        ++i_;
        if (!open_.empty() && open_.back().kind == '{') expect_key = true;
        else if (!open_.empty()) value_depth = open_.back().depth + 1;
      } else if (c == '"' || c == '\'') {
        skip_string();
      } else {
        ++i_;  // a number, boolean or date: no level of its own
      }
    }
    return npos;
  }

 private:
  static constexpr std::size_t npos = std::string_view::npos;

  struct Open {
    char kind;  // '[' array, '{' inline table
    int depth;  // the depth of the array or table itself
  };

  bool triple_quote_at(char q) const {
    return i_ + 2 < t_.size() && t_[i_] == q && t_[i_ + 1] == q && t_[i_ + 2] == q;
  }

  void skip_blanks() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }

  // A string at i_: basic or literal, one line or several. An unterminated one-line string ends
  // at the end of its line, an unterminated multi-line string at the end of the text.
  void skip_string() {
    char q = t_[i_];
    bool basic = q == '"';
    if (triple_quote_at(q)) {
      i_ += 3;
      while (i_ < t_.size()) {
        if (basic && t_[i_] == '\\') {
          i_ += 2;
        } else if (triple_quote_at(q)) {
          i_ += 3;
          // """a"""" is the text a" : up to two quotes more belong to the string.
          for (int extra = 0; extra < 2 && i_ < t_.size() && t_[i_] == q; ++extra) ++i_;
          return;
        } else {
          ++i_;
        }
      }
      i_ = t_.size();
      return;
    }
    ++i_;
    while (i_ < t_.size() && t_[i_] != '\n') {
      if (basic && t_[i_] == '\\') {
        i_ += 2;
        continue;
      }
      if (t_[i_++] == q) return;
    }
    if (i_ > t_.size()) i_ = t_.size();
  }

  // A dotted key at i_ whose first part is a level below `base`: counts its parts into `parts`
  // and returns the offset of the first part deeper than max_, or npos.
  std::size_t key(int base, int& parts) {
    parts = 0;
    while (true) {
      skip_blanks();
      if (i_ >= t_.size()) return npos;
      std::size_t at = i_;
      if (t_[i_] == '"' || t_[i_] == '\'') {
        skip_string();
      } else if (bare_key_char(t_[i_])) {
        while (i_ < t_.size() && bare_key_char(t_[i_])) ++i_;
      } else {
        return npos;
      }
      if (base + ++parts > max_) return at;
      skip_blanks();
      if (i_ >= t_.size() || t_[i_] != '.') return npos;
      ++i_;
    }
  }

  std::string_view t_;
  int max_;
  std::size_t i_ = 0;
  int table_depth_ = 0;  // the depth of the table the last [header] opened
  std::vector<Open> open_;
};

}  // namespace

std::size_t toml_too_deep_at(std::string_view text, int max_depth) { return DepthScanner(text, max_depth).too_deep_at(); }

}  // namespace shardctl::config
