#include "routing/key.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace shardctl::routing {

KeyType parse_key_type(std::string_view name) {
  if (name == "int4" || name == "integer") return KeyType::int4;
  if (name == "int8") return KeyType::int8;
  return key_type_words.parse(name);
}

bool try_parse_int64(std::string_view text, std::int64_t& out) noexcept {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return false;  // `out` stays untouched on failure
  out = value;
  return true;
}

namespace {

// A table rather than three range tests: uuid parsing sits on lookup's hot path.
constexpr std::array<std::int8_t, 256> hex_table = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'A' + 10);
  return t;
}();

int hex_value(char c) noexcept { return hex_table[static_cast<unsigned char>(c)]; }

bool fits_int4(std::int64_t v) noexcept {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

std::string shown(std::string_view text) {
  // Keep error lines one line and readable, whatever the operator fed in.
  std::string out = printable(text.substr(0, 80));
  if (text.size() > 80) out += "...";
  return out;
}

}  // namespace

// The grammar of PostgreSQL's uuid_in: optional braces, 32 hex digits in pairs, and a hyphen
// allowed after every second pair (except the last).
bool try_parse_uuid(std::string_view text, Uuid& result) noexcept {
  Uuid out;  // `result` stays untouched on failure
  std::size_t i = 0;
  bool braces = !text.empty() && text[0] == '{';
  if (braces) ++i;
  for (std::size_t byte = 0; byte < out.size(); ++byte) {
    if (i + 2 > text.size()) return false;
    int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[byte] = static_cast<std::uint8_t>(hi * 16 + lo);
    i += 2;
    if (i < text.size() && text[i] == '-' && byte % 2 == 1 && byte < out.size() - 1) ++i;
  }
  if (braces) {
    if (i >= text.size() || text[i] != '}') return false;
    ++i;
  }
  if (i != text.size()) return false;
  result = out;
  return true;
}

Key parse_key(KeyType type, std::string_view text) {
  switch (type) {
    case KeyType::int4:
    case KeyType::int8: {
      std::int64_t v = 0;
      bool ok = try_parse_int64(text, v);
      if (ok && type == KeyType::int4) ok = fits_int4(v);
      if (!ok)
        throw usage_error("'" + shown(text) + "' is not a valid " + std::string(to_text(type)) + " key",
                          type == KeyType::int4 ? "int keys are whole numbers from -2147483648 to 2147483647"
                                                : "bigint keys are whole numbers from -9223372036854775808 to "
                                                  "9223372036854775807");
      return v;
    }
    case KeyType::text:
      // PostgreSQL text cannot hold a NUL byte, so such a key can never exist on a shard.
      if (text.find('\0') != std::string_view::npos)
        throw usage_error("a text key cannot contain a NUL byte", "PostgreSQL text values never hold NUL bytes");
      // Shards store UTF-8: a key that is not UTF-8 can never be stored, and must not reach the
      // catalog (the server would refuse the bytes) or JSON output.
      if (!valid_utf8(text))
        throw usage_error("text key '" + shown(text) + "' is not valid UTF-8",
                          "shards store text as UTF-8; convert the key (e.g. with iconv)");
      return std::string(text);
    case KeyType::uuid: {
      Uuid u{};
      if (!try_parse_uuid(text, u))
        throw usage_error("'" + shown(text) + "' is not a valid uuid key",
                          "write 32 hex digits, e.g. a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
      return u;
    }
  }
  throw internal_error("unknown key type");
}

bool key_matches_type(KeyType type, const Key& key) noexcept {
  switch (type) {
    case KeyType::int4: {
      const auto* v = std::get_if<std::int64_t>(&key);
      return v && fits_int4(*v);
    }
    case KeyType::int8: return std::holds_alternative<std::int64_t>(key);
    case KeyType::text: return std::holds_alternative<std::string>(key);
    case KeyType::uuid: return std::holds_alternative<Uuid>(key);
  }
  return false;
}

std::optional<std::string> format_bound(const std::optional<Key>& key) {
  if (!key) return std::nullopt;
  return format_key(*key);
}

std::string format_key(const Key& key) {
  if (const auto* i = std::get_if<std::int64_t>(&key)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&key)) return *s;
  const auto& u = std::get<Uuid>(key);
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += digits[u[i] >> 4];
    out += digits[u[i] & 15];
  }
  return out;
}

std::strong_ordering compare_keys(const Key& a, const Key& b) noexcept {
  if (a.index() != b.index()) return a.index() <=> b.index();
  if (const auto* i = std::get_if<std::int64_t>(&a)) return *i <=> std::get<std::int64_t>(b);
  if (const auto* s = std::get_if<std::string>(&a)) {
    // Bytewise, as C collation: compare as unsigned bytes.
    const auto& t = std::get<std::string>(b);
    int c = std::memcmp(s->data(), t.data(), std::min(s->size(), t.size()));
    if (c != 0) return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    return s->size() <=> t.size();
  }
  int c = std::memcmp(std::get<Uuid>(a).data(), std::get<Uuid>(b).data(), 16);
  return c < 0 ? std::strong_ordering::less : c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
}

// A range is split at its first "..". Int and uuid bounds never contain "..". For text keys
// the rule means a HIGH may contain ".." ("a..m..z" is "a" up to "m..z") but a LOW cannot be
// written with one, and "a...b" reads as "a" up to ".b" (an empty range, refused). A LOW that
// needs ".." has to be given some other way than this syntax.
KeyRange parse_range(KeyType type, std::string_view text) {
  auto sep = text.find("..");
  if (sep == std::string_view::npos)
    throw usage_error("'" + shown(text) + "' is not a range", "write LOW..HIGH, LOW.. or ..HIGH (half-open)");
  KeyRange r;
  auto low = text.substr(0, sep), high = text.substr(sep + 2);
  if (!low.empty()) r.low = parse_key(type, low);
  if (!high.empty()) r.high = parse_key(type, high);
  if (r.low && r.high && compare_keys(*r.low, *r.high) >= 0)
    throw usage_error("empty range " + shown(text) + ": LOW must be below HIGH",
                      "ranges are half-open: LOW..HIGH holds LOW up to but not including HIGH");
  return r;
}

std::string format_range(const KeyRange& range) {
  return (range.low ? format_key(*range.low) : "") + ".." + (range.high ? format_key(*range.high) : "");
}

bool range_contains(const KeyRange& range, const Key& key) noexcept {
  if (range.low && compare_keys(key, *range.low) < 0) return false;
  if (range.high && compare_keys(key, *range.high) >= 0) return false;
  return true;
}

std::optional<Key> key_successor(KeyType type, const Key& key) {
  switch (type) {
    case KeyType::int4:
    case KeyType::int8: {
      auto v = std::get<std::int64_t>(key);
      if (v == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
      return Key{v + 1};
    }
    case KeyType::text: return Key{std::get<std::string>(key) + '\x01'};
    case KeyType::uuid: {
      Uuid u = std::get<Uuid>(key);
      for (auto i = u.size(); i-- > 0;) {
        if (u[i] != 0xff) {
          ++u[i];
          return Key{u};
        }
        u[i] = 0;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

KeyRange point_range(KeyType type, const Key& key) { return KeyRange{key, key_successor(type, key)}; }

bool ranges_overlap(const KeyRange& a, const KeyRange& b) noexcept {
  // [a.low, a.high) and [b.low, b.high) overlap when each starts before the other ends.
  bool a_starts_before_b_ends = !a.low || !b.high || compare_keys(*a.low, *b.high) < 0;
  bool b_starts_before_a_ends = !b.low || !a.high || compare_keys(*b.low, *a.high) < 0;
  return a_starts_before_b_ends && b_starts_before_a_ends;
}

}  // namespace shardctl::routing
