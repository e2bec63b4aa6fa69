// shardctl-map(1), hash maps: shardctl's client-side hash equals the server's extended hash (seed 0) on at least
// 100,000 random keys of each key type. Needs SHARDCTL_TEST_DSN (a live PostgreSQL 15 database,
// set by run_cxx_test.sh); without it every test fails rather than skips, so that a broken
// fixture cannot pass as green. The keys come from a fixed seed, printed, so a failure
// reproduces; SHARDCTL_TEST_SEED overrides it to explore other keys.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catalog/names.hpp"
#include "itest_pg.hpp"
#include "routing/pg_hash.hpp"

using namespace shardctl::routing;

namespace {

constexpr std::size_t keys_per_type = 100000;

// Printed by every test case, so that the seed is in the log of whichever one fails.
std::uint64_t test_seed() {
  const char* env = std::getenv("SHARDCTL_TEST_SEED");
  std::uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 20261122;
  std::cout << "itest_routing_hash: seed " << seed << " (SHARDCTL_TEST_SEED overrides it)\n";
  return seed;
}

using itest::Conn;
using itest::connect;
using itest::Result;

// The server's `fn(k, 0)` of every key, in input order, in one round trip.
std::vector<std::int64_t> server_hashes(PGconn* conn, const std::string& fn, const std::string& sql_type,
                                        const std::vector<std::string>& keys) {
  std::string sql = "SELECT " + fn + "(k, 0) FROM unnest($1::" + sql_type +
                    "[]) WITH ORDINALITY AS t(k, n) ORDER BY n";
  std::string literal = shardctl::catalog::text_array_literal(keys);
  const char* params[] = {literal.c_str()};
  Result res(PQexecParams(conn, sql.c_str(), 1, nullptr, params, nullptr, nullptr, 0));
  REQUIRE_MESSAGE(PQresultStatus(res.get()) == PGRES_TUPLES_OK, PQerrorMessage(conn));
  REQUIRE(PQntuples(res.get()) == static_cast<int>(keys.size()));
  std::vector<std::int64_t> out;
  out.reserve(keys.size());
  for (int i = 0; i < PQntuples(res.get()); ++i) out.push_back(std::strtoll(PQgetvalue(res.get(), i, 0), nullptr, 10));
  return out;
}

// Key text as a C-like literal, so control and non-ASCII bytes show in a failure message.
std::string escaped(const std::string& key) {
  std::string out = "\"";
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

void compare_with_server(KeyType type, const std::string& fn, const std::string& sql_type,
                         const std::vector<std::string>& keys, std::uint64_t seed) {
  INFO("seed " << seed << ", " << keys.size() << " " << sql_type << " keys");
  REQUIRE(keys.size() >= keys_per_type);
  auto conn = connect();
  auto server = server_hashes(conn.get(), fn, sql_type, keys);
  std::size_t mismatches = 0, first = 0;
  std::int64_t first_client = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto client = hash_key(type, parse_key(type, keys[i]));
    if (client != server[i] && mismatches++ == 0) {
      first = i;
      first_client = client;
    }
  }
  if (mismatches > 0)
    FAIL_CHECK(mismatches << " of " << keys.size() << " hashes differ; first: key #" << first << " "
                          << escaped(keys[first]) << ": server " << fn << " = " << server[first]
                          << ", shardctl = " << first_client);
  CHECK(mismatches == 0);
  if (mismatches == 0)
    std::cout << "itest_routing_hash: " << keys.size() << " " << sql_type << " keys agree with " << fn << "\n";
}

// Appends the UTF-8 encoding of code point `cp`.
void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Random valid UTF-8 (the server refuses anything else) of exactly `bytes` bytes, from code
// points of every encoded width, so that every byte value UTF-8 allows except NUL occurs.
std::string random_utf8(std::mt19937_64& rng, std::size_t bytes) {
  std::string out;
  while (out.size() < bytes) {
    std::size_t room = bytes - out.size();
    std::size_t width = 1 + rng() % (room < 4 ? room : 4);
    std::uint32_t cp = 0;
    switch (width) {
      case 1: cp = 0x01 + static_cast<std::uint32_t>(rng() % 0x7f); break;
      case 2: cp = 0x80 + static_cast<std::uint32_t>(rng() % (0x800 - 0x80)); break;
      case 3:
        do cp = 0x800 + static_cast<std::uint32_t>(rng() % (0x10000 - 0x800));
        while (cp >= 0xd800 && cp <= 0xdfff);  // surrogates are not characters
        break;
      default: cp = 0x10000 + static_cast<std::uint32_t>(rng() % (0x110000 - 0x10000)); break;
    }
    append_utf8(out, cp);
  }
  return out;
}

}  // namespace

TEST_CASE("int keys hash like hashint4extended") {
  auto seed = test_seed();
  std::mt19937_64 rng(seed);
  std::vector<std::string> keys = {"0", "1", "-1", "2147483647", "-2147483648", "-2147483647", "42"};
  std::uniform_int_distribution<std::int32_t> wide(INT32_MIN, INT32_MAX), narrow(-1000, 1000);
  while (keys.size() < keys_per_type) keys.push_back(std::to_string(keys.size() % 4 ? wide(rng) : narrow(rng)));
  compare_with_server(KeyType::int4, "hashint4extended", "int4", keys, seed);
}

TEST_CASE("bigint keys hash like hashint8extended, extremes and negatives included") {
  auto seed = test_seed();
  std::mt19937_64 rng(seed + 1);
  std::vector<std::string> keys = {"0", "1", "-1", "4294967296", "-4294967296", "4294967295", "-4294967295",
                                   "9223372036854775807", "-9223372036854775808", "-9223372036854775807",
                                   "2147483647", "-2147483648", "2147483648", "-2147483649"};
  std::uniform_int_distribution<std::int64_t> wide(INT64_MIN, INT64_MAX), narrow(-100000, 100000);
  std::uniform_int_distribution<std::int64_t> high_half(INT32_MIN, INT32_MAX);
  while (keys.size() < keys_per_type) {
    std::int64_t v = 0;
    switch (keys.size() % 4) {
      case 0: v = narrow(rng); break;
      case 1:  // near multiples of 2^32, where hashint8's folding of the halves matters
        v = static_cast<std::int64_t>(static_cast<std::uint64_t>(high_half(rng)) << 32) + narrow(rng);
        break;
      default: v = wide(rng); break;
    }
    keys.push_back(std::to_string(v));
  }
  compare_with_server(KeyType::int8, "hashint8extended", "int8", keys, seed);
}

TEST_CASE("text keys hash like hashtextextended: lengths 0..64, multi-byte UTF-8") {
  auto seed = test_seed();
  std::mt19937_64 rng(seed + 2);
  // Fixed keys first: every tail length of a 12-byte block, and what an array literal must escape.
  std::vector<std::string> keys = {"", "NULL", "\"", "\\", ",", "{}", " lead", "trail ", "h\xc3\xa9llo"};
  std::string abc;
  for (int n = 1; n <= 25; ++n) keys.push_back(abc += static_cast<char>('a' + (n - 1) % 26));
  while (keys.size() < keys_per_type) keys.push_back(random_utf8(rng, rng() % 65));
  compare_with_server(KeyType::text, "hashtextextended", "text", keys, seed);
}

TEST_CASE("uuid keys hash like uuid_hash_extended, in every spelling the server accepts") {
  auto seed = test_seed();
  std::mt19937_64 rng(seed + 3);
  std::vector<std::string> keys = {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                                   "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                                   "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11"};
  while (keys.size() < keys_per_type) {
    Uuid u;
    for (auto& b : u) b = static_cast<std::uint8_t>(rng());
    std::string text = format_key(u);
    switch (rng() % 4) {  // the server parses the same spelling shardctl does
      case 0: for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c))); break;
      case 1: text = "{" + text + "}"; break;
      case 2: std::erase(text, '-'); break;
      default: break;
    }
    keys.push_back(text);
  }
  compare_with_server(KeyType::uuid, "uuid_hash_extended", "uuid", keys, seed);
}
