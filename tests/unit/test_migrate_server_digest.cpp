// The digests an online cut-over has both servers compute and its purge computes again
// (migrate/server_digest.hpp): which aggregate a table gets, and that a journaled digest names
// the aggregate the purge must repeat.
#include <doctest/doctest.h>

#include "migrate/server_digest.hpp"

// Its own namespace: unit_tests is a unity build.
namespace test_migrate_server_digest {

namespace migrate = shardctl::migrate;
using migrate::ServerDigest;

migrate::PlannedTable table(std::vector<std::string> types) {
  migrate::PlannedTable t;
  t.name = "public.t";
  t.quoted = "\"public\".\"t\"";
  t.key_column = "k";
  for (std::size_t i = 0; i < types.size(); ++i) {
    t.columns.push_back(i == 0 ? "k" : "c" + std::to_string(i));
    t.not_null.push_back(i == 0);
  }
  t.types = std::move(types);
  return t;
}

TEST_CASE("a table whose every column has a value kind gets the value digest, else md5 rows") {
  auto plain = table({"bigint", "text", "numeric"});
  CHECK(migrate::server_digest_for(plain, true) == ServerDigest::values);
  CHECK(migrate::server_digest_for(plain, false) == ServerDigest::values_numeric_text);
  auto with_json = table({"bigint", "jsonb"});
  CHECK(migrate::server_digest_for(with_json, true) == ServerDigest::md5);
}

TEST_CASE("the select list is tagged with its aggregate, and the tag reads back") {
  auto t = table({"bigint", "numeric"});
  for (auto how : {ServerDigest::values, ServerDigest::values_numeric_text, ServerDigest::md5}) {
    auto sql = migrate::server_digest_select(t, how);
    // The tag is a literal prefix of the digest text: "'TAG:' || count(*) ...".
    auto tag = sql.substr(1, sql.find(':') - 1);
    CHECK(migrate::server_digest_of(tag + ":12:345") == how);
  }
  // Numerics by their text only where the servers' probes differ.
  CHECK(migrate::server_digest_select(t, ServerDigest::values_numeric_text).find("::text") != std::string::npos);
  CHECK(migrate::server_digest_select(t, ServerDigest::values).find("hash_numeric_extended") != std::string::npos);
  CHECK(migrate::server_digest_select(t, ServerDigest::md5).find("md5(") != std::string::npos);
}

TEST_CASE("other journaled digests name no server aggregate") {
  CHECK_FALSE(migrate::server_digest_of(""));
  CHECK_FALSE(migrate::server_digest_of("1000:123456789"));     // an untagged md5 sum of older runs
  CHECK_FALSE(migrate::server_digest_of("1000:xxh3:abcdef01"));  // a CopyDigest
  CHECK_FALSE(migrate::server_digest_of("valuesX:1:2"));
}

TEST_CASE("a value digest tagged by the verify reads back as its aggregate, with its row count") {
  // The offline verify journals the stream's value digest "COUNT:SUM" tagged for the purge.
  auto d = migrate::tagged_digest(ServerDigest::values, "434745:2270022646057442926842");
  CHECK(d == "values:434745:2270022646057442926842");
  CHECK(migrate::server_digest_of(d) == ServerDigest::values);
  CHECK(migrate::server_digest_of(migrate::tagged_digest(ServerDigest::values_numeric_text, "1:-5")) ==
        ServerDigest::values_numeric_text);
  CHECK(migrate::journaled_rows(d) == 434745);
  CHECK(migrate::journaled_rows("md5:12:-3") == 12);
  CHECK(migrate::journaled_rows("1000:xxh3:abcdef0123456789") == 1000);  // a CopyDigest
  CHECK(migrate::journaled_rows("7:xxh3t:abcdef") == 7);
  CHECK(migrate::journaled_rows("0:0") == 0);  // an untagged md5 sum of older runs
  CHECK_THROWS(migrate::journaled_rows("values:x:1"));
  CHECK_THROWS(migrate::journaled_rows(""));
  // The key the server digests are journaled under is no table's: a table's name has a dot.
  CHECK(std::string(migrate::journaled_server_digests).find('.') == std::string::npos);
}

}  // namespace test_migrate_server_digest
