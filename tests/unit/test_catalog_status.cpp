// Shard and mapping statuses (catalog/catalog.hpp): the catalog's words read back as the same
// status; an unknown word from the catalog is an internal error naming it, and from an operator
// a usage error with the message `shard add|set --status` has always given.
#include <doctest/doctest.h>

#include "catalog/catalog.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::catalog_status {

using catalog::MappingStatus;
using catalog::ShardStatus;

TEST_CASE("shard and mapping statuses round-trip through the catalog's words") {
  const std::pair<ShardStatus, const char*> shard_words[] = {
      {ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}};
  check_column_words(catalog::shard_status_words, read_as<catalog::ShardStatus>, shard_words);
  // An operator gives the same words (`shard add|set --status`).
  check_words(shard_words, parse_as<catalog::ShardStatus>);
  check_column_words(catalog::mapping_status_words, read_as<catalog::MappingStatus>,
                     {{MappingStatus::online, "online"}, {MappingStatus::offline, "offline"}});
}

TEST_CASE("an unknown status word from the catalog is an internal error naming it") {
  check_unknown_words(read_as<catalog::ShardStatus>, {"sleeping"}, "unknown shard status '{}' in shardctl.shards");
  // readonly: a shard's word, never a mapping's.
  check_unknown_words(read_as<catalog::MappingStatus>, {"readonly"}, "unknown mapping status '{}' in shardctl.mappings");
}

TEST_CASE("an unknown shard status from an operator is a usage error") {
  check_refused_words(parse_as<catalog::ShardStatus>, {"Online"}, ErrorKind::usage, "unknown shard status '{}'",
                      "use online, readonly or offline");
}

}  // namespace shardctl::test::catalog_status
