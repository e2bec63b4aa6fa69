// pump_copy_in_parts (shardio/copy_parts.hpp) against a live server: a binary COPY of 60,000
// rows loaded as several COPY statements in one transaction arrives whole and unchanged; each
// pause between parts sees the rows loaded so far; one part when the parts are larger than the
// stream; and an error between parts leaves the target's connection usable for its rollback.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "itest_pg.hpp"
#include "shardio/copy_digest.hpp"
#include "shardio/copy_parts.hpp"
#include "shardio/raw_conn.hpp"

using namespace shardctl::shardio;

namespace {

std::string dsn() {
  itest::connect();  // fails the test when SHARDCTL_TEST_DSN is missing or unreachable
  return std::getenv("SHARDCTL_TEST_DSN");
}

constexpr const char* copy_out = "COPY (SELECT id, name, amount FROM parts_src ORDER BY id) TO STDOUT (FORMAT binary)";
constexpr const char* copy_in = "COPY parts_dst (id, name, amount) FROM STDIN (FORMAT binary)";

void fresh_tables(RawConn& c) {
  c.query_each(
      "DROP TABLE IF EXISTS parts_src, parts_dst; "
      "CREATE TABLE parts_src (id int PRIMARY KEY, name text, amount numeric(12,2)); "
      "CREATE TABLE parts_dst (LIKE parts_src INCLUDING ALL); "
      "INSERT INTO parts_src SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE repeat('n', i % 50) || i END, i / 3.0 "
      "FROM generate_series(1, 60000) i");
}

std::int64_t count(RawConn& c, const std::string& table) { return std::stoll(c.query("SELECT count(*) FROM " + table)[0][0]); }

// The rows of both tables are the same multiset: nothing missing, duplicated or changed.
bool same_rows(RawConn& c) {
  return c.query("SELECT count(*) FROM ((TABLE parts_src EXCEPT ALL TABLE parts_dst) UNION ALL "
                 "(TABLE parts_dst EXCEPT ALL TABLE parts_src)) d")[0][0] == "0";
}

// Each case: fresh tables, a source and a target connection, and the digest of the stream,
// which says where a part may end (only at the end of a row).
struct Pump {
  RawConn src{dsn(), "source"}, dst{dsn(), "target"};
  CopyDigest digest{true};

  Pump() { fresh_tables(src); }

  // Parts of `part_bytes` each (up to the next row end), `pause` between them; the bytes pumped.
  std::uint64_t run(std::uint64_t part_bytes, std::function<void()> pause) {
    CopyParts parts{[&] { return digest.at_row_end(); }, [part_bytes] { return part_bytes; }, std::move(pause)};
    return pump_copy_in_parts(src, copy_out, dst, copy_in, [&](std::string_view chunk) { digest.add(chunk); }, parts);
  }
};

}  // namespace

TEST_CASE_FIXTURE(Pump, "a COPY loaded in parts arrives whole, each pause seeing the rows so far") {
  std::vector<std::int64_t> seen;
  dst.exec("BEGIN");
  auto bytes = run(64 * 1024, [&] { seen.push_back(count(dst, "parts_dst")); });
  dst.exec("COMMIT");
  CHECK(bytes > 1000000);
  CHECK(digest.complete());
  CHECK(digest.rows() == 60000);
  REQUIRE(seen.size() >= 10);
  CHECK(seen.front() > 0);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] > seen[i - 1]);
  CHECK(seen.back() < 60000);
  CHECK(count(dst, "parts_dst") == 60000);
  CHECK(same_rows(dst));
}

TEST_CASE_FIXTURE(Pump, "parts larger than the stream: one COPY, no pause") {
  int pauses = 0;
  run(UINT64_MAX, [&] { ++pauses; });
  CHECK(pauses == 0);
  CHECK(count(dst, "parts_dst") == 60000);
  CHECK(same_rows(dst));
}

TEST_CASE_FIXTURE(Pump, "an error between parts aborts the load and leaves both connections usable") {
  int pauses = 0;
  dst.exec("BEGIN");
  CHECK_THROWS_WITH(run(64 * 1024,
                        [&] {
                          if (++pauses == 3) throw std::runtime_error("stop here");
                        }),
                    "stop here");
  dst.exec("ROLLBACK");
  CHECK(count(dst, "parts_dst") == 0);
  CHECK(count(src, "parts_src") == 60000);
}
