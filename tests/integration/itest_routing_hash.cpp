// SPEC §1: shardctl's client-side hash equals the server's extended hash (seed 0) on at least
// 100,000 random keys of each key type. Needs SHARDCTL_TEST_DSN (a live database).
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "routing/pg_hash.hpp"

using namespace shardctl::routing;

namespace {

constexpr int keys_per_type = 100000;
constexpr std::uint64_t seed = 20261122;

struct PgConnClose {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
struct PgResultClear {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};

std::unique_ptr<PGconn, PgConnClose> connect() {
  const char* dsn = std::getenv("SHARDCTL_TEST_DSN");
  REQUIRE_MESSAGE(dsn != nullptr, "SHARDCTL_TEST_DSN is not set: run through ctest");
  std::unique_ptr<PGconn, PgConnClose> conn(PQconnectdb(dsn));
  REQUIRE_MESSAGE(PQstatus(conn.get()) == CONNECTION_OK, PQerrorMessage(conn.get()));
  return conn;
}

// A PostgreSQL array literal of the keys, each element double-quoted and escaped.
std::string array_literal(const std::vector<std::string>& keys) {
  std::string out = "{";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : keys[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// The server's hashes of `keys`, in order, computed by `fn` over the array cast to `type`.
std::vector<std::int64_t> server_hashes(PGconn* conn, const std::string& fn, const std::string& type,
                                        const std::vector<std::string>& keys) {
  std::string sql = "SELECT " + fn + "(k, 0) FROM unnest($1::" + type + "[]) WITH ORDINALITY AS t(k, n) ORDER BY n";
  std::string literal = array_literal(keys);
  const char* params[] = {literal.c_str()};
  std::unique_ptr<PGresult, PgResultClear> res(PQexecParams(conn, sql.c_str(), 1, nullptr, params, nullptr, nullptr, 0));
  REQUIRE_MESSAGE(PQresultStatus(res.get()) == PGRES_TUPLES_OK, PQerrorMessage(conn));
  REQUIRE(PQntuples(res.get()) == static_cast<int>(keys.size()));
  std::vector<std::int64_t> out;
  out.reserve(keys.size());
  for (int i = 0; i < PQntuples(res.get()); ++i) out.push_back(std::strtoll(PQgetvalue(res.get(), i, 0), nullptr, 10));
  return out;
}

void compare(KeyType type, const std::string& fn, const std::string& sql_type, const std::vector<std::string>& keys) {
  auto conn = connect();
  auto server = server_hashes(conn.get(), fn, sql_type, keys);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto client = hash_key(type, parse_key(type, keys[i]));
    if (client != server[i] && mismatches++ < 5)
      FAIL_CHECK(fn << "('" << keys[i] << "', 0): server " << server[i] << ", shardctl " << client);
  }
  CHECK(mismatches == 0);
  MESSAGE(keys.size() << " " << sql_type << " keys compared (seed " << seed << ")");
}

}  // namespace

TEST_CASE("int keys hash like hashint4extended") {
  std::mt19937_64 rng(seed);
  std::vector<std::string> keys = {"0", "1", "-1", "2147483647", "-2147483648"};
  std::uniform_int_distribution<std::int32_t> dist(INT32_MIN, INT32_MAX);
  while (keys.size() < keys_per_type) keys.push_back(std::to_string(dist(rng)));
  compare(KeyType::int4, "hashint4extended", "int4", keys);
}

TEST_CASE("bigint keys hash like hashint8extended") {
  std::mt19937_64 rng(seed + 1);
  std::vector<std::string> keys = {"0", "1", "-1", "4294967296", "-4294967296", "9223372036854775807",
                                   "-9223372036854775808", "2147483647", "-2147483648"};
  std::uniform_int_distribution<std::int64_t> wide(INT64_MIN, INT64_MAX);
  std::uniform_int_distribution<std::int64_t> narrow(-100000, 100000);
  while (keys.size() < keys_per_type) keys.push_back(std::to_string(keys.size() % 3 ? wide(rng) : narrow(rng)));
  compare(KeyType::int8, "hashint8extended", "int8", keys);
}

TEST_CASE("text keys hash like hashtextextended, any length, multi-byte UTF-8") {
  std::mt19937_64 rng(seed + 2);
  // ASCII, 2-, 3- and 4-byte UTF-8 sequences, so every tail length of the 12-byte blocks occurs.
  const std::vector<std::string> pieces = {"a", "Z", "0", " ", "~", "\"", "\\", ",", "{", "é", "ß", "€", "中", "😀"};
  std::vector<std::string> keys = {"", "a", "ab", "abc", "abcd", "hello world", std::string(100, 'x')};
  std::uniform_int_distribution<int> len(0, 64), pick(0, static_cast<int>(pieces.size()) - 1);
  while (keys.size() < keys_per_type) {
    std::string k;
    for (int n = len(rng), i = 0; i < n; ++i) k += pieces[static_cast<std::size_t>(pick(rng))];
    keys.push_back(k);
  }
  compare(KeyType::text, "hashtextextended", "text", keys);
}

TEST_CASE("uuid keys hash like uuid_hash_extended") {
  std::mt19937_64 rng(seed + 3);
  std::vector<std::string> keys = {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"};
  while (keys.size() < keys_per_type) {
    Uuid u;
    for (auto& b : u) b = static_cast<std::uint8_t>(rng());
    keys.push_back(format_key(u));
  }
  compare(KeyType::uuid, "uuid_hash_extended", "uuid", keys);
}
