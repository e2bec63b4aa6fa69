// copy_out_ahead (shardio/copy_ahead.hpp) against a live server: the bytes handed over are the
// bytes copy_out_to reads, in blocks of whole messages, also when the bound holds one block at
// a time and the consumer is slow; an error on either side (a consumer that throws, a source
// query that fails after some rows) reaches the caller, once, and leaves the source connection
// usable.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "itest_pg.hpp"
#include "shardio/copy_ahead.hpp"
#include "shardio/copy_digest.hpp"
#include "shardio/raw_conn.hpp"

using namespace shardctl::shardio;

namespace {

std::string dsn() {
  itest::connect();  // fails the test when SHARDCTL_TEST_DSN is missing or unreachable
  return std::getenv("SHARDCTL_TEST_DSN");
}

constexpr const char* rows_sql =
    "COPY (SELECT i, repeat('x', i % 97) FROM generate_series(1, 50000) i) TO STDOUT (FORMAT binary)";

std::string read_inline(RawConn& c, const std::string& sql) {
  std::string all;
  copy_out_to(c, sql, [&](std::string_view chunk) { all.append(chunk); });
  return all;
}

}  // namespace

TEST_CASE("read ahead: the same bytes as read inline, whole rows in every block") {
  RawConn src(dsn(), "source");
  std::string want = read_inline(src, rows_sql);
  for (std::size_t bound : {std::size_t{1}, std::size_t{32} << 20}) {
    CAPTURE(bound);
    std::string got;
    CopyDigest digest(true);
    int blocks = 0;
    bool rows_whole = true;
    auto bytes = copy_out_ahead(
        src, rows_sql,
        [&](std::string_view block) {
          ++blocks;
          got.append(block);
          digest.add(block);
          rows_whole = rows_whole && (digest.at_row_end() || digest.complete());
          // A slow consumer: the reader runs ahead until the bound stops it.
          if (blocks % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        },
        bound);
    CHECK(bytes == want.size());
    CHECK(got == want);
    CHECK(blocks > 4);
    CHECK(rows_whole);
    CHECK(digest.complete());
    CHECK(digest.rows() == 50000);
  }
  CHECK(src.query("SELECT 41 + 1")[0][0] == "42");
}

TEST_CASE("read ahead: a consumer that throws stops the read; the source stays usable") {
  RawConn src(dsn(), "source");
  int blocks = 0;
  CHECK_THROWS_WITH_AS(copy_out_ahead(
                           src, rows_sql,
                           [&](std::string_view) {
                             if (++blocks == 2) throw std::runtime_error("consumer gave up");
                           },
                           std::size_t{1}),
                       "consumer gave up", std::runtime_error);
  CHECK(blocks == 2);
  CHECK(src.query("SELECT 41 + 1")[0][0] == "42");
}

TEST_CASE("read ahead: a source that fails after some rows: its error, after the rows before it") {
  RawConn src(dsn(), "source");
  std::uint64_t seen = 0;
  // Rows stream until i = 40000 divides by zero.
  CHECK_THROWS_AS(copy_out_ahead(src,
                                 "COPY (SELECT i, repeat('x', 50), 1 / (40000 - i) FROM generate_series(1, 50000) i) "
                                 "TO STDOUT (FORMAT binary)",
                                 [&](std::string_view block) { seen += block.size(); }),
                  shardctl::Error);
  CHECK(seen > 0);
  CHECK(src.query("SELECT 41 + 1")[0][0] == "42");
}
