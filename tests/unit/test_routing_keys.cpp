#include <doctest/doctest.h>

#include <limits>

#include "core/error.hpp"
#include "routing/key.hpp"

using namespace shardctl;
using namespace shardctl::routing;

namespace {
std::string error_of(KeyType t, std::string_view text) {
  try {
    parse_key(t, text);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("key types and map kinds by name") {
  CHECK(parse_key_type("int") == KeyType::int4);
  CHECK(parse_key_type("integer") == KeyType::int4);
  CHECK(parse_key_type("bigint") == KeyType::int8);
  CHECK(parse_key_type("int8") == KeyType::int8);
  CHECK(parse_key_type("text") == KeyType::text);
  CHECK(parse_key_type("uuid") == KeyType::uuid);
  CHECK_THROWS_AS(parse_key_type("float"), Error);
  CHECK(key_type_name(KeyType::int4) == "int");
  CHECK(parse_map_kind("hash") == MapKind::hash);
  CHECK_THROWS_AS(parse_map_kind("tree"), Error);
}

TEST_CASE("integer keys parse strictly") {
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int8, "-9223372036854775808")) == INT64_MIN);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int8, "9223372036854775807")) == INT64_MAX);
  CHECK(std::get<std::int64_t>(parse_key(KeyType::int4, "-2147483648")) == INT32_MIN);
  CHECK(error_of(KeyType::int4, "2147483648") == "'2147483648' is not a valid int key");
  CHECK(error_of(KeyType::int8, "9223372036854775808") != "");
  CHECK(error_of(KeyType::int8, "abc") == "'abc' is not a valid bigint key");
  CHECK(error_of(KeyType::int8, "") != "");
  CHECK(error_of(KeyType::int8, " 1") != "");
  CHECK(error_of(KeyType::int8, "1 ") != "");
  CHECK(error_of(KeyType::int8, "1.0") != "");
  CHECK(error_of(KeyType::int8, "0x10") != "");
}

TEST_CASE("uuid keys accept what PostgreSQL accepts, print canonically") {
  const std::string canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
  for (const char* form : {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                           "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                           "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}"})
    CHECK(format_key(parse_key(KeyType::uuid, form)) == canonical);
  for (const char* bad : {"", "a0eebc99", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
                          "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                          "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", "a-0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"})
    CHECK_MESSAGE(error_of(KeyType::uuid, bad) != "", bad);
}

TEST_CASE("text keys are bytes, ordered bytewise") {
  CHECK(compare_keys(Key{std::string("Z")}, Key{std::string("a")}) < 0);
  CHECK(compare_keys(Key{std::string("z")}, Key{std::string("\xc3\xa9")}) < 0);  // é sorts after z
  CHECK(compare_keys(Key{std::string("ab")}, Key{std::string("abc")}) < 0);
  CHECK(compare_keys(Key{std::string("")}, Key{std::string("a")}) < 0);
  CHECK(compare_keys(Key{std::string("b")}, Key{std::string("b")}) == 0);
  CHECK(error_of(KeyType::text, std::string_view("a\0b", 3)) != "");
}

TEST_CASE("ranges parse half-open with optional bounds") {
  auto r = parse_range(KeyType::int8, "10..20");
  CHECK(range_contains(r, Key{std::int64_t{10}}));
  CHECK(range_contains(r, Key{std::int64_t{19}}));
  CHECK_FALSE(range_contains(r, Key{std::int64_t{20}}));
  CHECK_FALSE(range_contains(r, Key{std::int64_t{9}}));
  auto open_low = parse_range(KeyType::int8, "..0");
  CHECK(range_contains(open_low, Key{INT64_MIN}));
  CHECK(format_range(open_low) == "..0");
  auto open_high = parse_range(KeyType::int8, "5..");
  CHECK(range_contains(open_high, Key{INT64_MAX}));
  auto all = parse_range(KeyType::text, "..");
  CHECK(range_contains(all, Key{std::string("anything")}));
  CHECK_THROWS_WITH_AS(parse_range(KeyType::int8, "10..5"), "empty range 10..5: LOW must be below HIGH", Error);
  CHECK_THROWS_AS(parse_range(KeyType::int8, "5..5"), Error);
  CHECK_THROWS_AS(parse_range(KeyType::int8, "5"), Error);
  CHECK_THROWS_AS(parse_range(KeyType::int8, "a..b"), Error);
  CHECK_THROWS_AS(parse_range(KeyType::text, "m..a"), Error);
  auto text = parse_range(KeyType::text, "a..m..z");  // split at the first ".."
  CHECK(std::get<std::string>(*text.high) == "m..z");
}

TEST_CASE("overlap of half-open ranges") {
  auto R = [](const char* s) { return parse_range(KeyType::int8, s); };
  CHECK(ranges_overlap(R("0..10"), R("5..15")));
  CHECK_FALSE(ranges_overlap(R("0..10"), R("10..20")));
  CHECK(ranges_overlap(R("..10"), R("..-5")));
  CHECK(ranges_overlap(R(".."), R("3..4")));
  CHECK_FALSE(ranges_overlap(R("..0"), R("0..")));
  CHECK(ranges_overlap(R("..1"), R("0..")));
}
