#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "digest/sha256.hpp"
#include "archive/zstd_file.hpp"
#include "core/error.hpp"
#include "support.hpp"

using namespace shardctl;
namespace fs = std::filesystem;

namespace {
std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

TEST_CASE("SHA-256 matches the standard test vectors") {
  digest::Sha256 empty;
  CHECK(empty.hex_digest() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  digest::Sha256 abc;
  abc.update("a");
  abc.update("bc");
  CHECK(abc.hex_digest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("a zstd file reads back whole, with the SHA-256 of the stored bytes") {
  test::ScratchDir s;
  fs::path p = s.dir / "shard_1" / "public.orders" / "batch-000001.copy.zst";
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "\tcustomer " + std::to_string(i % 97) + "\n";
  archive::WrittenFile w;
  {
    archive::ZstdFileWriter writer(p);
    writer.write(std::string_view(text).substr(0, 1000));
    writer.write(std::string_view(text).substr(1000));
    w = writer.finish();
  }
  CHECK(fs::exists(p));
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));
  CHECK(w.raw_bytes == text.size());
  CHECK(w.compressed_bytes == fs::file_size(p));
  CHECK(w.compressed_bytes < text.size() / 3);
  digest::Sha256 stored;
  stored.update(read_all(p));
  CHECK(w.sha256 == stored.hex_digest());

  std::string back;
  archive::read_zstd_file(p, w.sha256, [&](std::string_view chunk) { back.append(chunk); });
  CHECK(back == text);

  // A wrong digest, a flipped byte and a truncated file are data errors (exit 65).
  CHECK_THROWS_AS(archive::read_zstd_file(p, std::string(64, '0'), [](std::string_view) {}), Error);
  std::string bytes = read_all(p);
  bytes[bytes.size() / 2] ^= 0x40;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  try {
    archive::read_zstd_file(p, w.sha256, [](std::string_view) {});
    FAIL("a damaged file was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
  }
  std::ofstream(p, std::ios::binary | std::ios::trunc) << read_all(p).substr(0, 10);
  CHECK_THROWS_AS(archive::read_zstd_file(p, w.sha256, [](std::string_view) {}), Error);
}

TEST_CASE("an abandoned writer leaves no file under either name") {
  test::ScratchDir s;
  fs::path p = s.dir / "x.zst";
  {
    archive::ZstdFileWriter writer(p);
    writer.write("1\t2\n");
  }
  CHECK_FALSE(fs::exists(p));
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));
}

TEST_CASE("write_file_atomically replaces the whole file") {
  test::ScratchDir s;
  fs::path p = s.dir / "manifest.json";
  archive::write_file_atomically(p, "{\"a\":1}");
  archive::write_file_atomically(p, "{}");
  CHECK(read_all(p) == "{}");
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));
}

#include "archive/manifest.hpp"

namespace {

// A valid manifest of one table and one file.
archive::Manifest one_file_manifest() {
  archive::Manifest m;
  m.run = "0b1e7c53-8f7e-4bd5-9d51-3b7e0e3d2a11";
  m.job = "old-orders";
  m.root_table = "public.orders";
  m.predicate = "created_at < now() - interval '400 days'";
  m.server_encoding = "UTF8";
  m.ddl["public.orders"] = "CREATE TABLE public.orders (id bigint PRIMARY KEY)";
  m.files.push_back({"shard_1/public.orders/000001.copy.zst", "shard_1", "public.orders", 1, 10, 100, 50,
                     std::string(64, 'a'), false});
  return m;
}

}  // namespace

TEST_CASE("a manifest round-trips, and an edited one is refused as bad data") {
  test::ScratchDir s;
  auto m = one_file_manifest();
  archive::write_manifest(s.dir, m);
  auto back = archive::read_manifest(s.dir);
  CHECK(archive::to_json(back) == archive::to_json(m));

  auto expect_bad = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto doc = archive::to_json(m);
    edit(doc);
    try {
      archive::manifest_from_json(doc, "manifest.json");
      FAIL("an edited manifest was accepted: " << doc.dump());
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
    }
  };
  expect_bad([](auto& d) { d["format"] = "other"; });
  expect_bad([](auto& d) { d["files"][0]["path"] = "../../etc/passwd"; });
  expect_bad([](auto& d) { d["files"][0]["path"] = "/etc/passwd"; });
  expect_bad([](auto& d) { d["files"][0]["sha256"] = "xyz"; });
  expect_bad([](auto& d) { d["files"][0]["rows"] = "ten"; });
  expect_bad([](auto& d) { d["files"][0]["table"] = "public.nosuch"; });
  expect_bad([](auto& d) { d.erase("ddl"); });
  std::ofstream(s.dir / "manifest.json") << "{ not json";
  CHECK_THROWS_AS(archive::read_manifest(s.dir), Error);
}

TEST_CASE("a manifest nested a million deep, a FIFO or a device is refused (65) before it is parsed") {
  test::ScratchDir s;
  fs::path p = s.dir / "manifest.json";
  std::ofstream(p) << "{\"format\": \"shardctl-archive/1\",\n \"files\": " << std::string(1000000, '[');
  try {
    archive::read_manifest(s.dir);
    FAIL("a deep manifest was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
    CHECK(std::string(e.what()).rfind(p.string() + ":2:74: files", 0) == 0);
    CHECK(std::string(e.what()).find("nested more than 64 levels deep") != std::string::npos);
  }
  fs::remove(p);
  REQUIRE(mkfifo(p.c_str(), 0600) == 0);
  try {
    archive::read_manifest(s.dir);
    FAIL("a FIFO was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
    CHECK(std::string(e.what()) == "archive manifest " + p.string() + " is not a regular file (a FIFO)");
  }
  fs::remove(p);
  fs::create_symlink("/dev/zero", p);
  try {
    archive::read_manifest(s.dir);
    FAIL("/dev/zero was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "archive manifest " + p.string() + " is not a regular file (a character device)");
  }
}

TEST_CASE("manifest counts are whole numbers of their range, never converted") {
  auto m = one_file_manifest();
  auto refused = [&](const char* key, nlohmann::json value, const std::string& message) {
    auto doc = archive::to_json(m);
    doc["files"][0][key] = value;
    try {
      archive::manifest_from_json(doc, "manifest.json");
      FAIL("accepted " << key << " = " << value.dump());
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK(std::string(e.what()) == message);
    }
  };
  refused("rows", 1.5, "manifest.json: files[0]: \"rows\" must be a whole number, not 1.5");
  refused("bytes", -1, "manifest.json: files[0]: \"bytes\" must be a whole number >= 0, not -1");
  refused("batch", nlohmann::json::parse("9223372036854775808"),
          "manifest.json: files[0]: \"batch\" must be a whole number, not 9223372036854775808");
  refused("restored", "yes", "manifest.json: files[0]: \"restored\" has the wrong type");
}

#include "archive/destination.hpp"

TEST_CASE("destinations: dir:PATH and postgres:DSN, nothing else, never a password") {
  auto d = archive::parse_destination("dir:/var/lib/shardctl/../shardctl/archive");
  CHECK(d.kind == archive::Destination::Kind::dir);
  CHECK(d.path == "/var/lib/shardctl/archive");
  auto p = archive::parse_destination("postgres:host=arch dbname=archive");
  CHECK(p.kind == archive::Destination::Kind::postgres);
  CHECK(p.describe() == "postgres:dbname=archive host=arch");
  for (const char* bad : {"dir:", "s3://bucket", "/tmp/x", "postgres:host=a password=S3cret", "postgres:port=x"}) {
    CAPTURE(bad);
    try {
      archive::parse_destination(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find("S3cret") == std::string::npos);
    }
  }
}

#include "archive/keyset.hpp"

TEST_CASE("keyset SQL: row-value bounds in key order, a LIMIT, never OFFSET") {
  archive::Keyset k{"\"public\".\"orders\"", {{"tenant", "text"}, {"id", "bigint"}}, "status = 'done'"};
  CHECK(k.key_row() == "(\"tenant\", \"id\")");
  CHECK(k.upper_bound_sql() ==
        "SELECT \"tenant\", \"id\" FROM \"public\".\"orders\" ORDER BY \"tenant\" DESC, \"id\" DESC LIMIT 1");
  CHECK(k.batch_filter(false) == "(\"tenant\", \"id\") <= ($1::text, $2::bigint) AND (status = 'done')");
  CHECK(k.batch_filter(true, 3) ==
        "(\"tenant\", \"id\") > ($3::text, $4::bigint) AND (\"tenant\", \"id\") <= ($5::text, $6::bigint) AND "
        "(status = 'done')");
  auto end = k.batch_end_sql(true);
  CHECK(end.find("LIMIT $5)") != std::string::npos);
  CHECK(end.find("OFFSET") == std::string::npos);
  CHECK(k.batch_end_sql(false).find("LIMIT $3)") != std::string::npos);
  archive::Keyset quoted{"t", {{"we\"ird", "uuid"}}, "true"};
  CHECK(quoted.key_row() == "(\"we\"\"ird\")");
}

#include "archive/archive_table.hpp"

TEST_CASE("archive tables: the source's columns, then source_shard and archived_at; mismatches refused") {
  std::vector<shardio::Column> src{{"id", "bigint"}, {"Created At", "timestamp with time zone"}};
  auto ddl = archive::archive_table_ddl("sales", "Orders", src);
  REQUIRE(ddl.size() == 3);
  CHECK(ddl[0] == "CREATE SCHEMA IF NOT EXISTS \"sales\"");
  CHECK(ddl[1] == "CREATE TABLE IF NOT EXISTS \"sales\".\"Orders\" (\"id\" bigint, \"Created At\" timestamp with "
                  "time zone, \"source_shard\" text NOT NULL, \"archived_at\" timestamptz NOT NULL)");
  CHECK(ddl[2].find("(\"source_shard\", \"archived_at\")") != std::string::npos);

  auto dest = src;
  dest.push_back({"source_shard", "text"});
  dest.push_back({"archived_at", "timestamp with time zone"});
  archive::require_matching_columns(src, dest, "sales.\"Orders\"");
  auto expect_refused = [&](std::vector<shardio::Column> d, const std::string& words) {
    try {
      archive::require_matching_columns(src, d, "sales.\"Orders\"");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  auto wrong_type = dest;
  wrong_type[0].type = "integer";
  expect_refused(wrong_type, "has column id integer where id bigint belongs");
  expect_refused({dest.begin(), dest.end() - 1}, "lacks column archived_at");
  auto extra = dest;
  extra.push_back({"note", "text"});
  expect_refused(extra, "extra column note");
}
