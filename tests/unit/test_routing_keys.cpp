// Key types, strict key parsing, canonical text, ordering and half-open ranges (no database).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "routing/key.hpp"
#include "support.hpp"

using namespace shardctl;
using namespace shardctl::routing;

namespace {

// The message of the usage Error parse_key throws, or "" when the text parses.
std::string keys_error_of(KeyType t, std::string_view text) {
  return test::usage_error_of([&] { parse_key(t, text); });
}

std::string range_error_of(KeyType t, std::string_view text) {
  return test::usage_error_of([&] { parse_range(t, text); });
}

Key I(std::int64_t v) { return Key{v}; }
Key T(std::string s) { return Key{std::move(s)}; }
Key U(const char* s) { return parse_key(KeyType::uuid, s); }

}  // namespace

TEST_CASE("key types by name, with PostgreSQL's aliases") {
  CHECK(parse_key_type("int") == KeyType::int4);
  CHECK(parse_key_type("int4") == KeyType::int4);
  CHECK(parse_key_type("integer") == KeyType::int4);
  CHECK(parse_key_type("bigint") == KeyType::int8);
  CHECK(parse_key_type("int8") == KeyType::int8);
  CHECK(parse_key_type("text") == KeyType::text);
  CHECK(parse_key_type("uuid") == KeyType::uuid);
  for (KeyType t : {KeyType::int4, KeyType::int8, KeyType::text, KeyType::uuid})
    CHECK(parse_key_type(to_text(t)) == t);
  CHECK(to_text(KeyType::int4) == "int");
  CHECK(to_text(KeyType::int8) == "bigint");
  for (const char* bad : {"", "float", "Int", "int2", "varchar", "int "}) {
    CAPTURE(bad);
    try {
      parse_key_type(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()) == "unknown key type '" + std::string(bad) + "'");
      CHECK(e.hint() == "use int, bigint, text or uuid");
    }
  }
}

TEST_CASE("map kinds by name") {
  for (MapKind k : {MapKind::list, MapKind::range, MapKind::hash}) CHECK(parse_word<MapKind>(to_text(k)) == k);
  CHECK(to_text(MapKind::list) == "list");
  CHECK_THROWS_WITH_AS(parse_word<MapKind>("tree"), "unknown map kind 'tree'", Error);
  CHECK_THROWS_AS(parse_word<MapKind>(""), Error);
  CHECK_THROWS_AS(parse_word<MapKind>("Hash"), Error);
}

TEST_CASE("int keys: 32 bits, strictly decimal") {
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "-2147483648")) == INT32_MIN);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "2147483647")) == INT32_MAX);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "0")) == 0);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "-0")) == 0);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "007")) == 7);  // as PostgreSQL's int4in
  CHECK(keys_error_of(KeyType::int4, "2147483648") == "'2147483648' is not a valid int key");
  CHECK(keys_error_of(KeyType::int4, "-2147483649") == "'-2147483649' is not a valid int key");
  CHECK(keys_error_of(KeyType::int4, "9223372036854775807") == "'9223372036854775807' is not a valid int key");
}

TEST_CASE("bigint keys: 64 bits, strictly decimal") {
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int8, "-9223372036854775808")) == INT64_MIN);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int8, "9223372036854775807")) == INT64_MAX);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int8, "4294967296")) == 4294967296LL);
  CHECK(keys_error_of(KeyType::int8, "9223372036854775808") == "'9223372036854775808' is not a valid bigint key");
  CHECK(keys_error_of(KeyType::int8, "-9223372036854775809") == "'-9223372036854775809' is not a valid bigint key");
  CHECK(keys_error_of(KeyType::int8, "abc") == "'abc' is not a valid bigint key");
  // No whitespace, sign other than '-', fraction, exponent, base prefix, separators or junk.
  for (const char* bad : {"", " 1", "1 ", "\t1", "1\n", "+1", "--1", "-", "1.0", "1e3", "0x10", "1_000", "1,000",
                          "12abc", "\xd9\xa1", "NaN"}) {
    CAPTURE(bad);
    std::string shown;  // control characters print as \xNN
    for (char c : std::string(bad)) {
      if (static_cast<unsigned char>(c) >= 0x20) shown += c;
      else shown += c == '\t' ? "\\x09" : "\\x0A";
    }
    CHECK(keys_error_of(KeyType::int8, bad) == "'" + shown + "' is not a valid bigint key");
    CHECK(keys_error_of(KeyType::int4, bad) == "'" + shown + "' is not a valid int key");
  }
  std::int64_t v = 5;
  CHECK_FALSE(try_parse_int64("", v));
  CHECK_FALSE(try_parse_int64("1x", v));
  CHECK(v == 5);
  CHECK(try_parse_int64("-42", v));
  CHECK(v == -42);
}

TEST_CASE("error lines stay one readable line") {
  // Control characters would break the one-line error; very long input is cut.
  CHECK(keys_error_of(KeyType::int8, "1\n2") == "'1\\x0A2' is not a valid bigint key");
  std::string long_text(200, '9');
  CHECK(keys_error_of(KeyType::int8, long_text) == "'" + std::string(80, '9') + "...' is not a valid bigint key");
  try {
    parse_key(KeyType::int4, "x");
  } catch (const Error& e) {
    CHECK(e.hint() == "int keys are whole numbers from -2147483648 to 2147483647");
  }
}

TEST_CASE("uuid keys accept exactly what PostgreSQL's uuid_in accepts") {
  const std::string canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
  // Each form below was checked against PostgreSQL 15 (SELECT '...'::uuid).
  for (const char* form : {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                           "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                           "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}",
                           "a0eebc999c0b-4ef8-bb6d6bb9bd380a11", "A0eEbC99-9c0B4ef8-Bb6d-6bb9Bd380a11",
                           "a0eebc99-9c0b-4ef8-bb6d-6bb9bd38-0a11"}) {
    CAPTURE(form);
    CHECK(format_key(parse_key(KeyType::uuid, form)) == canonical);
  }
  for (const char* bad :
       {"", "a0eebc99", "{}", "a0-eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a-11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a-1", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}",
        " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
        "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "0x0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111"}) {
    CAPTURE(bad);
    CHECK(keys_error_of(KeyType::uuid, bad) == std::string("'").append(bad).append("' is not a valid uuid key"));
    Uuid u{};
    CHECK_FALSE(try_parse_uuid(bad, u));
  }
  CHECK(keys_error_of(KeyType::uuid, std::string_view("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1\0", 36)) != "");
  CHECK(format_key(Uuid{}) == "00000000-0000-0000-0000-000000000000");
  Uuid ff;
  ff.fill(0xff);
  CHECK(format_key(ff) == "ffffffff-ffff-ffff-ffff-ffffffffffff");
}

TEST_CASE("text keys are their bytes") {
  CHECK(std::get<std::string>(parse_key(KeyType::text, "")).empty());
  CHECK(format_key(parse_key(KeyType::text, " padded ")) == " padded ");
  CHECK(format_key(parse_key(KeyType::text, "h\xc3\xa9llo")) == "h\xc3\xa9llo");
  CHECK(format_key(parse_key(KeyType::text, "a..b")) == "a..b");
  CHECK(keys_error_of(KeyType::text, std::string_view("a\0b", 3)) == "a text key cannot contain a NUL byte");
  CHECK(key_matches_type(KeyType::text, T("x")));
}

TEST_CASE("canonical text of ints") {
  CHECK(format_key(parse_key(KeyType::int8, "-0042")) == "-42");
  CHECK(format_key(I(INT64_MIN)) == "-9223372036854775808");
  CHECK(format_key(I(INT64_MAX)) == "9223372036854775807");
}

TEST_CASE("key_matches_type tells a key of the map's type from another") {
  CHECK(key_matches_type(KeyType::int4, I(INT32_MAX)));
  CHECK_FALSE(key_matches_type(KeyType::int4, I(std::int64_t{INT32_MAX} + 1)));
  CHECK_FALSE(key_matches_type(KeyType::int4, I(std::int64_t{INT32_MIN} - 1)));
  CHECK(key_matches_type(KeyType::int8, I(INT64_MIN)));
  CHECK_FALSE(key_matches_type(KeyType::int8, T("1")));
  CHECK_FALSE(key_matches_type(KeyType::text, I(1)));
  CHECK(key_matches_type(KeyType::uuid, Key{Uuid{}}));
  CHECK_FALSE(key_matches_type(KeyType::uuid, T("")));
}

TEST_CASE("ordering: ints numerically, text and uuid bytewise") {
  CHECK(compare_keys(I(-1), I(0)) < 0);
  CHECK(compare_keys(I(9), I(10)) < 0);  // numeric, not textual
  CHECK(compare_keys(I(INT64_MIN), I(INT64_MAX)) < 0);
  CHECK(compare_keys(I(7), I(7)) == 0);
  CHECK(compare_keys(I(10), I(9)) > 0);

  CHECK(compare_keys(T(""), T("a")) < 0);
  CHECK(compare_keys(T("Z"), T("a")) < 0);      // C collation: uppercase first
  CHECK(compare_keys(T("ab"), T("abc")) < 0);   // a prefix sorts first
  CHECK(compare_keys(T("abc"), T("ab")) > 0);
  CHECK(compare_keys(T("b"), T("b")) == 0);
  CHECK(compare_keys(T("z"), T("\xc3\xa9")) < 0);   // bytes >= 0x80 after ASCII (unsigned)
  CHECK(compare_keys(T("\x7f"), T("\x80")) < 0);
  CHECK(compare_keys(T("10"), T("9")) < 0);     // bytewise, not numeric
  CHECK(compare_keys(T(std::string("a\x01", 2)), T("a")) > 0);

  CHECK(compare_keys(U("00000000-0000-0000-0000-000000000001"), U("00000000-0000-0000-0000-000000000002")) < 0);
  CHECK(compare_keys(U("ffffffff-0000-0000-0000-000000000000"), U("00000000-ffff-ffff-ffff-ffffffffffff")) > 0);
  CHECK(compare_keys(U("7fffffff-ffff-ffff-ffff-ffffffffffff"), U("80000000-0000-0000-0000-000000000000")) < 0);
  CHECK(compare_keys(U("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), U("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")) == 0);
}

TEST_CASE("ranges parse half-open, with optional bounds") {
  auto r = parse_range(KeyType::int8, "10..20");
  CHECK(range_contains(r, I(10)));  // low inclusive
  CHECK(range_contains(r, I(19)));
  CHECK_FALSE(range_contains(r, I(20)));  // high exclusive
  CHECK_FALSE(range_contains(r, I(9)));
  CHECK(format_range(r) == "10..20");

  auto negative = parse_range(KeyType::int8, "-20..-10");
  CHECK(range_contains(negative, I(-20)));
  CHECK_FALSE(range_contains(negative, I(-10)));

  auto open_low = parse_range(KeyType::int8, "..0");
  CHECK_FALSE(open_low.low.has_value());
  CHECK(range_contains(open_low, I(INT64_MIN)));
  CHECK_FALSE(range_contains(open_low, I(0)));
  CHECK(format_range(open_low) == "..0");

  auto open_high = parse_range(KeyType::int8, "5..");
  CHECK_FALSE(open_high.high.has_value());
  CHECK(range_contains(open_high, I(INT64_MAX)));
  CHECK_FALSE(range_contains(open_high, I(4)));
  CHECK(format_range(open_high) == "5..");

  auto all = parse_range(KeyType::int4, "..");
  CHECK(range_contains(all, I(INT32_MIN)));
  CHECK(format_range(all) == "..");
  CHECK(range_contains(parse_range(KeyType::text, ".."), T("")));

  auto extremes = parse_range(KeyType::int8, "-9223372036854775808..9223372036854775807");
  CHECK(range_contains(extremes, I(INT64_MIN)));
  CHECK_FALSE(range_contains(extremes, I(INT64_MAX)));

  // Bounds print canonically.
  CHECK(format_range(parse_range(KeyType::int8, "007..010")) == "7..10");
  CHECK(format_range(parse_range(KeyType::uuid, "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}..")) ==
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11..");

  auto text = parse_range(KeyType::text, "a..n");
  CHECK(range_contains(text, T("a")));
  CHECK(range_contains(text, T("mzzz")));
  CHECK_FALSE(range_contains(text, T("n")));
  CHECK_FALSE(range_contains(text, T("")));
}

TEST_CASE("range parse errors") {
  CHECK(range_error_of(KeyType::int8, "10..5") == "empty range 10..5: LOW must be below HIGH");
  CHECK(range_error_of(KeyType::int8, "5..5") == "empty range 5..5: LOW must be below HIGH");
  CHECK(range_error_of(KeyType::text, "m..a") == "empty range m..a: LOW must be below HIGH");
  CHECK(range_error_of(KeyType::uuid,
                       "00000000-0000-0000-0000-000000000002..00000000-0000-0000-0000-000000000001") != "");
  CHECK(range_error_of(KeyType::int8, "5") == "'5' is not a range");
  CHECK(range_error_of(KeyType::int8, "") == "'' is not a range");
  CHECK(range_error_of(KeyType::int8, "5.6") == "'5.6' is not a range");
  CHECK(range_error_of(KeyType::int8, "a..5") == "'a' is not a valid bigint key");
  CHECK(range_error_of(KeyType::int8, "5..b") == "'b' is not a valid bigint key");
  CHECK(range_error_of(KeyType::int4, "0..2147483648") == "'2147483648' is not a valid int key");
  CHECK(range_error_of(KeyType::int8, "1...5") == "'.5' is not a valid bigint key");  // split at the first ".."
  CHECK(range_error_of(KeyType::int8, "1 .. 5") != "");
  CHECK(range_error_of(KeyType::uuid, "x..") == "'x' is not a valid uuid key");
}

TEST_CASE("text ranges split at the first \"..\"") {
  auto r = parse_range(KeyType::text, "a..m..z");
  CHECK(std::get<std::string>(*r.low) == "a");
  CHECK(std::get<std::string>(*r.high) == "m..z");
  auto dots = parse_range(KeyType::text, "...z");
  CHECK_FALSE(dots.low.has_value());
  CHECK(std::get<std::string>(*dots.high) == ".z");
  CHECK(range_error_of(KeyType::text, "a...b") == "empty range a...b: LOW must be below HIGH");  // "a" .. ".b"
  auto high_only = parse_range(KeyType::text, "....");  // ..HIGH with HIGH ".."
  CHECK_FALSE(high_only.low.has_value());
  CHECK(std::get<std::string>(*high_only.high) == "..");
}

TEST_CASE("overlap of half-open ranges") {
  auto R = [](const char* s) { return parse_range(KeyType::int8, s); };
  struct Case {
    const char* a;
    const char* b;
    bool overlap;
  };
  for (const Case& c : std::vector<Case>{{"0..10", "5..15", true},
                                         {"0..10", "10..20", false},  // touching is not overlapping
                                         {"0..10", "9..10", true},
                                         {"0..10", "0..10", true},
                                         {"0..10", "2..3", true},  // nested
                                         {"0..10", "20..30", false},
                                         {"..10", "..-5", true},
                                         {"..10", "10..", false},
                                         {"..11", "10..", true},
                                         {"..", "3..4", true},
                                         {"..", "..", true},
                                         {"..0", "0..", false},
                                         {"5..", "100..", true},
                                         {"5..", "..5", false},
                                         {"5..", "..6", true}}) {
    CAPTURE(c.a);
    CAPTURE(c.b);
    CHECK(ranges_overlap(R(c.a), R(c.b)) == c.overlap);
    CHECK(ranges_overlap(R(c.b), R(c.a)) == c.overlap);  // symmetric
  }
  auto S = [](const char* s) { return parse_range(KeyType::text, s); };
  CHECK_FALSE(ranges_overlap(S("a..b"), S("b..c")));
  CHECK(ranges_overlap(S("a..ba"), S("b..c")));
}

TEST_CASE("key successor: the next key in the map's order, none past the largest") {
  CHECK(std::get<std::int64_t>(*key_successor(KeyType::int8, Key{std::int64_t{41}})) == 42);
  CHECK(!key_successor(KeyType::int8, Key{std::numeric_limits<std::int64_t>::max()}));
  CHECK(std::get<std::string>(*key_successor(KeyType::text, Key{std::string("acme")})) == std::string("acme\x01"));
  Key u = parse_key(KeyType::uuid, "00000000-0000-0000-0000-0000000000ff");
  CHECK(format_key(*key_successor(KeyType::uuid, u)) == "00000000-0000-0000-0000-000000000100");
  CHECK(!key_successor(KeyType::uuid, parse_key(KeyType::uuid, "ffffffff-ffff-ffff-ffff-ffffffffffff")));
}

TEST_CASE("point range: holds its key and nothing else") {
  for (KeyType t : {KeyType::int8, KeyType::text, KeyType::uuid}) {
    Key k = t == KeyType::int8 ? Key{std::int64_t{7}}
            : t == KeyType::text ? Key{std::string("globex")}
                                 : parse_key(KeyType::uuid, "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
    KeyRange r = point_range(t, k);
    CHECK(range_contains(r, k));
    CHECK(!range_contains(r, *key_successor(t, k)));
  }
  CHECK(range_contains(point_range(KeyType::text, Key{std::string("a")}), Key{std::string("a")}));
  CHECK(!range_contains(point_range(KeyType::text, Key{std::string("a")}), Key{std::string("ab")}));
  CHECK(!range_contains(point_range(KeyType::text, Key{std::string("ab")}), Key{std::string("a")}));
}
