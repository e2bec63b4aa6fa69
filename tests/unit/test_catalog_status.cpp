// Shard and mapping statuses (catalog/catalog.hpp): the catalog's words read back as the same
// status; an unknown word from the catalog is an internal error naming it, and from an operator
// a usage error with the message `shard add|set --status` has always given.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "catalog/catalog.hpp"
#include "core/error.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_catalog_status {

namespace catalog = shardctl::catalog;
using catalog::MappingStatus;
using catalog::ShardStatus;

TEST_CASE("shard and mapping statuses round-trip through the catalog's words") {
  const std::pair<ShardStatus, const char*> shard_words[] = {
      {ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}};
  for (const auto& [status, word] : shard_words) {
    CHECK(catalog::to_text(status) == word);
    CHECK(catalog::shard_status_from_text(word) == status);
    CHECK(catalog::parse_shard_status(word) == status);
    std::ostringstream out;
    out << status;
    CHECK(out.str() == word);
  }
  const std::pair<MappingStatus, const char*> mapping_words[] = {{MappingStatus::online, "online"},
                                                                 {MappingStatus::offline, "offline"}};
  for (const auto& [status, word] : mapping_words) {
    CHECK(catalog::to_text(status) == word);
    CHECK(catalog::mapping_status_from_text(word) == status);
  }
}

TEST_CASE("an unknown status word from the catalog is an internal error naming it") {
  try {
    catalog::shard_status_from_text("sleeping");
    FAIL("accepted a shard status");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown shard status 'sleeping' in shardctl.shards");
  }
  try {
    catalog::mapping_status_from_text("readonly");  // a shard's word, never a mapping's
    FAIL("accepted a mapping status");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown mapping status 'readonly' in shardctl.mappings");
  }
}

TEST_CASE("an unknown shard status from an operator is a usage error") {
  try {
    catalog::parse_shard_status("Online");
    FAIL("accepted 'Online'");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::usage);
    CHECK(std::string(e.what()) == "unknown shard status 'Online'");
    CHECK(e.hint() == "use online, readonly or offline");
  }
}

}  // namespace test_catalog_status
