// A dir: archive file is loadable with no shardctl: `zstd -dc FILE | psql -c "COPY t FROM
// STDIN"` restores exactly the rows (awkward text, NULLs, bytea, arrays), and shardctl's own
// reader feeds COPY the same bytes after checking the SHA-256.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "archive/zstd_file.hpp"
#include "itest_pg.hpp"
#include "pg/connection.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/row_checksum.hpp"

using namespace shardctl;
namespace fs = std::filesystem;

namespace {
std::string fingerprint(pg::Connection& c, const std::string& table) {
  std::string out;
  c.read([&](pqxx::work& tx) {
    out = tx.exec("SELECT count(*)::text || '/' || " + shardio::row_hash_sum() + "::text FROM " + table + " " +
                  shardio::row_alias)[0][0]
              .as<std::string>();
  });
  return out;
}
}  // namespace

TEST_CASE("archive files load with zstd and psql alone, and through shardctl's reader") {
  const std::string dsn = itest::test_dsn();
  pg::Connection conn(dsn, "shard test");
  conn.transact([](pqxx::work& tx) {
    tx.exec("CREATE TABLE src (id bigint PRIMARY KEY, note text, blob bytea, tags text[], at timestamptz)");
    tx.exec("INSERT INTO src SELECT i, CASE WHEN i % 5 = 0 THEN NULL ELSE E'tab\\there\\nline \\\\ ünï ' || i END, "
            "decode(md5(i::text), 'hex'), ARRAY['a', NULL, 'c \"q\"'], '2026-01-01'::timestamptz + i * interval '1 h' "
            "FROM generate_series(1, 5000) i");
    tx.exec("CREATE TABLE by_psql (LIKE src)");
    tx.exec("CREATE TABLE by_reader (LIKE src)");
  });
  char tmpl[] = "/tmp/shardctl-itest-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  fs::path file = dir / "shard_1" / "public.src" / "000001.copy.zst";

  shardio::RawConn raw(dsn, "shard test");
  archive::ZstdFileWriter writer(file);
  auto bytes = shardio::copy_out_to(raw, "COPY (SELECT * FROM src WHERE id > 0) TO STDOUT",
                                    [&](std::string_view chunk) { writer.write(chunk); });
  auto written = writer.finish();
  CHECK(written.raw_bytes == bytes);
  CHECK(bytes > 0);

  std::string cmd = "zstd -q -dc '" + file.string() + "' | psql -X -q -v ON_ERROR_STOP=1 '" + std::string(dsn) +
                    "' -c 'COPY by_psql FROM STDIN'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(fingerprint(conn, "by_psql") == fingerprint(conn, "src"));

  shardio::copy_in_from(raw, "COPY by_reader FROM STDIN", [&](const auto& put) {
    archive::read_zstd_file(file, written.sha256, put);
  });
  CHECK(fingerprint(conn, "by_reader") == fingerprint(conn, "src"));

  // A failing reader (wrong digest) aborts the COPY: nothing is loaded, the connection lives on.
  raw.exec("BEGIN");
  CHECK_THROWS(shardio::copy_in_from(raw, "COPY by_reader FROM STDIN", [&](const auto& put) {
    archive::read_zstd_file(file, std::string(64, '0'), put);
  }));
  raw.exec("ROLLBACK");
  CHECK(fingerprint(conn, "by_reader") == fingerprint(conn, "src"));
  fs::remove_all(dir);
}
