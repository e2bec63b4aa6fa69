#include "shardio/value_digest.hpp"

#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "shardio/big_endian.hpp"
#include "routing/pg_hash.hpp"

namespace shardctl::shardio {

namespace {

// Added to a numeric(p,s) column's seed for its negative values: beyond any column position.
constexpr std::uint64_t negative_seed_offset = std::uint64_t{1} << 32;

void need(std::string_view field, std::size_t size) {
  if (field.size() != size) throw internal_error("a binary COPY value had an unexpected size");
}

std::string decimal(__int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string out;
  while (u > 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + out : out;
}

__int128 parse_decimal(std::string_view s) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) throw internal_error("a value digest had no sum");
  __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') throw internal_error("a value digest's sum was not a number");
    v = v * 10 - (c - '0');  // accumulate negative: the most negative value fits
  }
  return negative ? v : -v;
}

}  // namespace

std::optional<ValueKind> value_kind(std::string_view type) {
  // The type without its modifiers: "character varying(20)" -> "character varying",
  // "timestamp(3) with time zone" -> "timestamp with time zone".
  std::string base;
  int depth = 0;
  for (char c : type) {
    if (c == '(') ++depth;
    if (depth == 0) base += c;
    if (c == ')') --depth;
  }
  if (base == "smallint") return ValueKind::int2;
  if (base == "integer") return ValueKind::int4;
  if (base == "bigint") return ValueKind::int8;
  if (base == "boolean") return ValueKind::boolean;
  if (base == "date") return ValueKind::date;
  if (base == "timestamp without time zone") return ValueKind::timestamp;
  if (base == "timestamp with time zone") return ValueKind::timestamptz;
  if (base == "text" || base == "character varying") return ValueKind::text;
  if (base == "uuid") return ValueKind::uuid;
  if (base == "numeric") return base == type ? ValueKind::numeric : ValueKind::numeric_fixed;
  return std::nullopt;
}

std::string value_hash_sql(const ValueColumn& column, std::size_t position) {
  const auto& c = column.quoted;
  std::string seed = std::to_string(position + 1);
  std::string numeric_text_hash = "hashtextextended(" + c + "::text COLLATE \"C\", " + seed + ")";
  std::string h;
  switch (column.kind) {
    case ValueKind::int2: h = "hashint2extended(" + c + ", " + seed + ")"; break;
    case ValueKind::int4: h = "hashint4extended(" + c + ", " + seed + ")"; break;
    case ValueKind::int8: h = "hashint8extended(" + c + ", " + seed + ")"; break;
    case ValueKind::boolean: h = "hashint4extended(" + c + "::int, " + seed + ")"; break;
    case ValueKind::date: h = "hash_record_extended(ROW(" + c + "), " + seed + ")"; break;
    case ValueKind::timestamp: h = "timestamp_hash_extended(" + c + ", " + seed + ")"; break;
    case ValueKind::timestamptz:
      h = "timestamp_hash_extended(" + c + " AT TIME ZONE INTERVAL '00:00', " + seed + ")";
      break;
    case ValueKind::text: h = "hashtextextended(" + c + " COLLATE \"C\", " + seed + ")"; break;
    case ValueKind::uuid: h = "uuid_hash_extended(" + c + ", " + seed + ")"; break;
    case ValueKind::numeric:
      // scale() is NULL for NaN and the infinities: their text stands in.
      h = "coalesce(hash_numeric_extended(" + c + ", " + seed + ") # hashint4extended(2 * scale(" + c + ") + (" + c +
          " < 0)::int, " + seed + "), " + numeric_text_hash + ")";
      break;
    case ValueKind::numeric_fixed:
      h = "hash_numeric_extended(" + c + ", CASE WHEN " + c + " < 0 THEN " + std::to_string(position + 1 + negative_seed_offset) +
          " ELSE " + seed + " END)";
      break;
    case ValueKind::numeric_text: h = numeric_text_hash; break;
  }
  return column.not_null ? h : "coalesce(" + h + ", 0)";
}

std::string value_digest_sql(const std::vector<ValueColumn>& columns) {
  std::string row;
  for (std::size_t i = 0; i < columns.size(); ++i) row += (row.empty() ? "" : " # ") + value_hash_sql(columns[i], i);
  if (row.empty()) row = "0";
  return "count(*) || ':' || coalesce(sum(" + row + "), 0)";
}

std::string numeric_text(std::string_view b) {
  if (b.size() < 8) throw internal_error("a binary numeric was too short");
  int ndigits = static_cast<std::int16_t>(be16(b.data()));
  int weight = static_cast<std::int16_t>(be16(b.data() + 2));
  std::uint16_t sign = be16(b.data() + 4);
  int dscale = static_cast<std::int16_t>(be16(b.data() + 6));
  if (sign == 0xC000) return "NaN";
  if (sign == 0xD000) return "Infinity";
  if (sign == 0xF000) return "-Infinity";
  if (ndigits < 0 || dscale < 0 || b.size() != 8 + 2 * static_cast<std::size_t>(ndigits))
    throw internal_error("a binary numeric had an unexpected size");
  auto digit = [&](int d) { return d >= 0 && d < ndigits ? static_cast<int>(be16(b.data() + 8 + 2 * d)) : 0; };
  // numeric_out's get_str_from_var, digit group by digit group (base 10000).
  std::string out;
  if (sign == 0x4000) out += '-';
  int d;
  if (weight < 0) {
    d = weight + 1;
    out += '0';
  } else {
    for (d = 0; d <= weight; ++d) {
      int dig = digit(d);
      bool putit = d > 0;
      for (int div : {1000, 100, 10}) {
        int d1 = dig / div;
        dig -= d1 * div;
        putit = putit || d1 > 0;
        if (putit) out += static_cast<char>('0' + d1);
      }
      out += static_cast<char>('0' + dig);
    }
  }
  if (dscale > 0) {
    out += '.';
    std::string frac;
    for (int i = 0; i < dscale; ++d, i += 4) {
      int dig = digit(d);
      frac += static_cast<char>('0' + dig / 1000);
      frac += static_cast<char>('0' + dig / 100 % 10);
      frac += static_cast<char>('0' + dig / 10 % 10);
      frac += static_cast<char>('0' + dig % 10);
    }
    out += frac.substr(0, static_cast<std::size_t>(dscale));
  }
  return out;
}

namespace {

// hash_numeric_extended (numeric.c) of a finite numeric in its binary send format: its digits
// and weight, not its sign or scale.
std::uint64_t numeric_digits_hash(std::string_view b, std::uint64_t seed) {
  int ndigits = static_cast<std::int16_t>(be16(b.data()));
  int weight = static_cast<std::int16_t>(be16(b.data() + 2));
  int dscale = static_cast<std::int16_t>(be16(b.data() + 6));
  if (ndigits < 0 || dscale < 0 || b.size() != 8 + 2 * static_cast<std::size_t>(ndigits))
    throw internal_error("a binary numeric had an unexpected size");
  // The server hashes its NumericDigit (int16) array as it lies in memory: host order.
  std::int16_t small[32];
  std::vector<std::int16_t> large;
  std::int16_t* digits = small;
  if (ndigits > 32) {
    large.resize(static_cast<std::size_t>(ndigits));
    digits = large.data();
  }
  for (int i = 0; i < ndigits; ++i) digits[i] = static_cast<std::int16_t>(be16(b.data() + 8 + 2 * i));
  int start = 0, end = ndigits;
  while (start < end && digits[start] == 0) {
    ++start;
    --weight;
  }
  while (end > start && digits[end - 1] == 0) --end;
  if (start == end) return seed - 1;
  std::string_view bytes(reinterpret_cast<const char*>(digits + start), static_cast<std::size_t>(end - start) * 2);
  return routing::pg_hash_bytes_extended(bytes, seed) ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(weight));
}

// hash_numeric_extended XOR hashint4extended(2 * dscale + negative); NaN and the infinities
// hash their text.
std::uint64_t numeric_hash(std::string_view b, std::uint64_t seed) {
  if (b.size() < 8) throw internal_error("a binary numeric was too short");
  std::uint16_t sign = be16(b.data() + 4);
  int dscale = static_cast<std::int16_t>(be16(b.data() + 6));
  if (sign != 0x0000 && sign != 0x4000) return routing::pg_hash_bytes_extended(numeric_text(b), seed);
  return numeric_digits_hash(b, seed) ^
         routing::pg_hash_uint32_extended(static_cast<std::uint32_t>(2 * dscale + (sign == 0x4000 ? 1 : 0)), seed);
}

// hash_numeric_extended with the seed moved for a negative value; NaN and the infinities get
// the seed itself, as the server's function returns it for them.
std::uint64_t numeric_fixed_hash(std::string_view b, std::uint64_t seed) {
  if (b.size() < 8) throw internal_error("a binary numeric was too short");
  std::uint16_t sign = be16(b.data() + 4);
  std::uint64_t s = seed + (sign == 0x4000 || sign == 0xF000 ? negative_seed_offset : 0);
  if (sign != 0x0000 && sign != 0x4000) return s;
  return numeric_digits_hash(b, s);
}

// -1234.5670 in numeric's binary send format: 2 digits, weight 0, negative, scale 4.
constexpr char probe_binary[] = {0, 2, 0, 0, 0x40, 0, 0, 4, 0x04, static_cast<char>(0xD2), 0x16, 0x26};

}  // namespace

const char* const numeric_probe_sql = "SELECT hash_numeric_extended('-1234.5670'::numeric, 3)::text";

bool numeric_probe_matches(std::string_view server_value) {
  std::uint64_t expected = numeric_digits_hash(std::string_view(probe_binary, sizeof probe_binary), 3);
  return std::string(server_value) == std::to_string(static_cast<std::int64_t>(expected));
}

std::uint64_t value_hash(ValueKind kind, std::string_view f, std::size_t position) {
  std::uint64_t seed = position + 1;
  switch (kind) {
    case ValueKind::int2:
      need(f, 2);
      return routing::pg_hash_uint32_extended(static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int16_t>(be16(f.data())))), seed);
    case ValueKind::int4:
      need(f, 4);
      return routing::pg_hash_uint32_extended(be32(f.data()), seed);
    case ValueKind::int8:
      need(f, 8);
      return routing::pg_hashint8_seeded(static_cast<std::int64_t>(be64(f.data())), seed);
    case ValueKind::boolean:
      need(f, 1);
      return routing::pg_hash_uint32_extended(static_cast<unsigned char>(f[0]), seed);
    case ValueKind::date:
      need(f, 4);
      return routing::pg_hash_uint32_extended(be32(f.data()), seed);
    case ValueKind::timestamp:
    case ValueKind::timestamptz:
      need(f, 8);
      return routing::pg_hashint8_seeded(static_cast<std::int64_t>(be64(f.data())), seed);
    case ValueKind::text:
      return routing::pg_hash_bytes_extended(f, seed);
    case ValueKind::uuid:
      need(f, 16);
      return routing::pg_hash_bytes_extended(f, seed);
    case ValueKind::numeric:
      return numeric_hash(f, seed);
    case ValueKind::numeric_fixed:
      return numeric_fixed_hash(f, seed);
    case ValueKind::numeric_text:
      return routing::pg_hash_bytes_extended(numeric_text(f), seed);
  }
  throw internal_error("unknown value kind");
}

std::string ValueSum::text() const { return std::to_string(rows_) + ":" + decimal(sum_); }

namespace {

std::string combine_value_digests(const std::string& a, const std::string& b, int sign) {
  auto ca = a.find(':'), cb = b.find(':');
  if (ca == std::string::npos || cb == std::string::npos) throw internal_error("a value digest had no count");
  std::int64_t rows = std::stoll(a.substr(0, ca)) + sign * std::stoll(b.substr(0, cb));
  return std::to_string(rows) + ":" + decimal(parse_decimal(std::string_view(a).substr(ca + 1)) +
                                               sign * parse_decimal(std::string_view(b).substr(cb + 1)));
}

}  // namespace

std::string add_value_digests(const std::string& a, const std::string& b) { return combine_value_digests(a, b, 1); }

std::string subtract_value_digests(const std::string& a, const std::string& b) {
  auto out = combine_value_digests(a, b, -1);
  if (out[0] == '-') throw internal_error("a value digest " + b + " of more rows than " + a + " was subtracted from it");
  return out;
}

}  // namespace shardctl::shardio
