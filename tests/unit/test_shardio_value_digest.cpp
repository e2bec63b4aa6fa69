// The value digest computed client-side must equal what PostgreSQL 15 computes in SQL. The
// expected numbers below were printed by a PostgreSQL 15 server (the SQL is beside each); the
// integration test t_verify_digest compares whole tables of edge values against a live one.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "shardio/value_digest.hpp"

using namespace shardctl::shardio;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s += static_cast<char>(v);
  return s;
}
std::string be(std::uint64_t v, int n) {
  std::string s;
  for (int i = n - 1; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::int64_t h(ValueKind k, const std::string& field, std::size_t position) {
  return static_cast<std::int64_t>(value_hash(k, field, position));
}
// numeric_send(v) as bytes, from its hex text.
std::string hex(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) out += static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

TEST_CASE("value hashes equal PostgreSQL's seeded extended hashes") {
  CHECK(h(ValueKind::int4, be(5, 4), 0) == 1473811485915220926);                     // hashint4extended(5, 1)
  CHECK(h(ValueKind::int4, be(static_cast<std::uint32_t>(-7), 4), 1) == -4280293135234795377);  // hashint4extended(-7, 2)
  CHECK(h(ValueKind::int8, be(static_cast<std::uint64_t>(-5), 8), 2) == 4566310048417840633);   // hashint8extended(-5, 3)
  CHECK(h(ValueKind::int8, be(9000000000, 8), 3) == -532016020533749344);              // hashint8extended(9000000000, 4)
  CHECK(h(ValueKind::int2, be(0x8000, 2), 4) == -5337788205484584784);                 // hashint2extended(-32768, 5)
  CHECK(h(ValueKind::text, "abc", 1) == 792850575183825444);                           // hashtextextended('abc', 2)
  CHECK(h(ValueKind::text, "", 5) == 3040317012111238321);                             // hashtextextended('', 6)
  CHECK(h(ValueKind::uuid, hex("a0eebc999c0b4ef8bb6d6bb9bd380a11"), 6) == -7831945923156934305);  // uuid_hash_extended(.., 7)
  CHECK(h(ValueKind::numeric_text, hex("0002000040000003000c1388"), 7) == -7410913947305480500);  // hashtextextended('-12.500', 8)
  // hash_numeric_extended(v, s) # hashint4extended(2 * scale(v) + (v < 0)::int, s); NaN by its text
  CHECK(h(ValueKind::numeric, hex("0002000040000003000c1388"), 7) == -4807377632936988683);  // -12.500, 8
  CHECK(h(ValueKind::numeric, hex("0000000000000003"), 2) == -6549764852426651650);          // 0.000, 3
  CHECK(h(ValueKind::numeric, hex("00000000c0000000"), 3) == 7973021789025709484);           // NaN, 4
  CHECK(h(ValueKind::numeric, hex("0005000200000006000109291a8500000064"), 1) == -5928049076087113721);  // 123456789.000001, 2
  // numeric(p,s): hash_numeric_extended(v, CASE WHEN v < 0 THEN s + 2^32 ELSE s END); scale not hashed
  CHECK(h(ValueKind::numeric_fixed, hex("0002000040000003000c1388"), 7) == 4273652586861495919);  // -12.500, 8 + 2^32
  CHECK(h(ValueKind::numeric_fixed, hex("0002000040000002000c1388"), 7) == 4273652586861495919);  // -12.50, the same
  CHECK(h(ValueKind::numeric_fixed, hex("0002000000000002000c1388"), 7) == 1026563152909209290);  // 12.50, 8
  CHECK(h(ValueKind::numeric_fixed, hex("00000000c0000000"), 3) == 4);                           // NaN, 4: the seed
  CHECK(h(ValueKind::boolean, bytes({1}), 8) == 5702160639948485477);       // hashint4extended(true::int, 9)
  CHECK(h(ValueKind::date, be(8825, 4), 9) == 4641862076662630640);         // row(date '2024-02-29'), 10
  CHECK(h(ValueKind::timestamptz, be(762523200500000, 8), 10) == -3270552392142564935);  // timestamptz ..., 11
  CHECK(h(ValueKind::timestamp, be(762523200500000, 8), 10) == -3270552392142564935);    // the same instant, no zone
}

TEST_CASE("numeric_text prints what numeric_out prints") {
  CHECK(numeric_text(hex("0000000000000000")) == "0");
  CHECK(numeric_text(hex("0000000000000003")) == "0.000");
  CHECK(numeric_text(hex("0002000040000003000c1388")) == "-12.500");
  CHECK(numeric_text(hex("0005000200000006000109291a8500000064")) == "123456789.000001");
  CHECK(numeric_text(hex("00000000c0000000")) == "NaN");
  CHECK(numeric_text(hex("00000000d0000020")) == "Infinity");
  CHECK(numeric_text(hex("00000000f0000020")) == "-Infinity");
  CHECK(numeric_text(hex("0001fffb000000140001")) == "0.00000000000000000001");
  CHECK(numeric_text(hex("00010001000000000001")) == "10000");
  CHECK(numeric_text(hex("0001ffff000000040001")) == "0.0001");
  CHECK(numeric_text(hex("0006000440000001270f270f270f270f270f1388")) == "-99999999999999999999.5");
  CHECK_THROWS(numeric_text(hex("000200000000")));
}

TEST_CASE("a set's value digest: count and exact sum, in any order, beyond 64 bits") {
  // SELECT count(*) || ':' || coalesce(sum(coalesce(hashint4extended(a, 1), 0)
  //   # coalesce(hashtextextended(b COLLATE "C", 2), 0)), 0)
  // FROM (VALUES (1, 'x'), (2, NULL), (NULL, 'y')) v(a, b)   -> 3:13213425432627356461
  ValueSum sum;
  sum.add(static_cast<std::int64_t>(value_hash(ValueKind::int4, be(1, 4), 0) ^ value_hash(ValueKind::text, "x", 1)));
  sum.add(static_cast<std::int64_t>(value_hash(ValueKind::int4, be(2, 4), 0)));
  sum.add(static_cast<std::int64_t>(value_hash(ValueKind::text, "y", 1)));
  CHECK(sum.text() == "3:13213425432627356461");
  CHECK(add_value_digests("2:-5", "1:3") == "3:-2");
  CHECK(add_value_digests("0:0", "3:13213425432627356461") == "3:13213425432627356461");
  CHECK(add_value_digests("1:-170141183460469231731687303715884105727", "1:-1") == "2:-170141183460469231731687303715884105728");
  CHECK(value_digest_sql({{"\"a\"", ValueKind::int4}, {"\"b\"", ValueKind::text}}) ==
        "count(*) || ':' || coalesce(sum(coalesce(hashint4extended(\"a\", 1), 0) # "
        "coalesce(hashtextextended(\"b\" COLLATE \"C\", 2), 0)), 0)");
}

TEST_CASE("which column types the value digest covers") {
  CHECK(value_kind("integer") == ValueKind::int4);
  CHECK(value_kind("character varying(20)") == ValueKind::text);
  CHECK(value_kind("timestamp(3) with time zone") == ValueKind::timestamptz);
  CHECK(value_kind("timestamp without time zone") == ValueKind::timestamp);
  CHECK(value_kind("boolean") == ValueKind::boolean);
  CHECK(value_kind("date") == ValueKind::date);
  CHECK(value_kind("numeric(12,2)") == ValueKind::numeric_fixed);
  CHECK(value_kind("numeric(3,-2)") == ValueKind::numeric_fixed);
  CHECK(value_kind("numeric") == ValueKind::numeric);
  CHECK_FALSE(value_kind("double precision"));
  CHECK_FALSE(value_kind("jsonb"));
  CHECK_FALSE(value_kind("integer[]"));
  CHECK_FALSE(value_kind("character(3)"));
  CHECK_FALSE(value_kind("public.money_amount"));
}
