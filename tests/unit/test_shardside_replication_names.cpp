// The pure parts of shardside/replication.hpp: the names of an operation's publication, slot
// and subscription (built from its id and a batch number, parsed back, other names refused),
// WAL positions as text, and how an unmet precondition becomes a usage error.
#include <doctest/doctest.h>

#include <climits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "shardside/names.hpp"
#include "shardside/replication.hpp"

using namespace shardctl;
using namespace shardctl::shardside;

namespace {

bool only_slot_name_characters(const std::string& name) {
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

TEST_CASE("replication names: built from the operation id and batch, parsed back") {
  std::string name = replication_name("3F2504E0-4F89-11D3-9A0C-0305E82C3301", 7);
  CHECK(name == "shardctl_op_3f2504e04f8911d39a0c0305e82c3301_7");
  CHECK(only_slot_name_characters(name));
  auto back = parse_replication_name(name);
  REQUIRE(back);
  CHECK(back->op_id == "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
  CHECK(back->batch_no == 7);

  // Without hyphens the same name; the largest batch number still fits PostgreSQL's 63 bytes.
  CHECK(replication_name("3f2504e04f8911d39a0c0305e82c3301", 7) == name);
  std::string longest = replication_name("ffffffff-ffff-ffff-ffff-ffffffffffff", INT_MAX);
  CHECK(longest.size() <= max_identifier_bytes);
  REQUIRE(parse_replication_name(longest));
  CHECK(parse_replication_name(longest)->batch_no == INT_MAX);
  CHECK(parse_replication_name(replication_name("00000000-0000-0000-0000-000000000000", 0))->batch_no == 0);
}

TEST_CASE("replication names: anything not made by replication_name is not shardctl's") {
  const std::string hex = "3f2504e04f8911d39a0c0305e82c3301";
  for (const std::string& other : std::vector<std::string>{
           "shardctl_op_", "shardctl_op_" + hex, "shardctl_op_" + hex + "_", "shardctl_op_" + hex + "_01",
           "shardctl_op_" + hex + "_2147483648", "shardctl_op_" + hex + "_99999999999", "shardctl_op_" + hex + "_1x",
           "shardctl_op_" + hex + "_-1", "shardctl_op_3F2504E04F8911D39A0C0305E82C3301_1",
           "shardctl_op_" + hex.substr(1) + "_1", "shardctl_op_" + hex + "0_1",
           "shardctl_op_3f2504e0-4f89-11d3-9a0c-0305e82c3301_1", "sub_" + hex + "_1", "pg_16384_sync_16385",
           "shardctl_guard"}) {
    CAPTURE(other);
    CHECK_FALSE(parse_replication_name(other));
  }
  static_assert(is_replication_name_shape("shardctl_op_3f2504e04f8911d39a0c0305e82c3301_12"));
  static_assert(!is_replication_name_shape("shardctl_op_3f2504e04f8911d39a0c0305e82c3301_012"));
}

TEST_CASE("replication names: an id that is not a UUID, or a negative batch, is a bug (70)") {
  for (std::string bad :
       {"", "3f2504e0", "3f2504e0-4f89-11d3-9a0c-0305e82c330g", "3f2504e0-4f89-11d3-9a0c-0305e82c33011", "op 1"}) {
    CAPTURE(bad);
    try {
      replication_name(bad, 1);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::internal);
    }
  }
  CHECK_THROWS_AS(replication_name("3f2504e0-4f89-11d3-9a0c-0305e82c3301", -1), Error);
}

TEST_CASE("WAL positions: pg_lsn text to a number, ordered, and back") {
  CHECK(parse_lsn("0/0") == 0u);
  CHECK(parse_lsn("16/B374D848") == (std::uint64_t{0x16} << 32 | 0xB374D848u));
  CHECK(parse_lsn("16/b374d848") == parse_lsn("16/B374D848"));
  CHECK(*parse_lsn("1/0") > *parse_lsn("0/FFFFFFFF"));
  CHECK(format_lsn(*parse_lsn("16/B374D848")) == "16/B374D848");
  CHECK(format_lsn(0) == "0/0");
  CHECK(format_lsn(std::uint64_t{0xFFFFFFFF} << 32 | 0xFFFFFFFFu) == "FFFFFFFF/FFFFFFFF");
  for (const char* bad : {"", "/", "1/", "/1", "1/2/3", "123456789/0", "0/123456789", "G/0", "1 /0", "10"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_lsn(bad));
  }
}

TEST_CASE("preconditions: the first unmet one is the usage error (64), with its hint and how many more") {
  PreconditionReport none;
  CHECK(none.ok());
  CHECK_NOTHROW(none.require());

  PreconditionReport report;
  report.unmet.push_back({Requirement::wal_level, "shard s1 has wal_level = replica; online moves need logical",
                          "set wal_level = logical and restart the server"});
  report.unmet.push_back({Requirement::slot_wal_keep_size, "max_slot_wal_keep_size = -1", "set it"});
  report.unmet.push_back({Requirement::replica_identity, "identity", "fix it"});
  CHECK_FALSE(report.ok());
  CHECK(report.has(Requirement::slot_wal_keep_size));
  CHECK_FALSE(report.has(Requirement::wal_senders));
  try {
    report.require();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()) ==
          "shard s1 has wal_level = replica; online moves need logical (and 2 more unmet requirements)");
    CHECK(e.hint() == "set wal_level = logical and restart the server");
  }
  CHECK(to_text(Requirement::replica_identity) == "replica_identity");
  CHECK(to_text(ReplicationObjectKind::subscription) == "subscription");
  CHECK(to_text(WaitOutcome::timed_out) == "timed_out");
}
