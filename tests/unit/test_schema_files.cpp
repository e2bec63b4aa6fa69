#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "schema/files.hpp"

using namespace shardctl;
using namespace shardctl::schema;
namespace fs = std::filesystem;

namespace {
struct Scratch {
  fs::path dir;
  Scratch() {
    char tmpl[] = "/tmp/shardctl-schema-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~Scratch() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name, std::ios::binary) << text; }
};

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no Error thrown");
  return ErrorKind::internal;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("versions compare numerically, part by part") {
  CHECK(*parse_version("2") < *parse_version("10"));
  CHECK(*parse_version("1.2") < *parse_version("1.10"));
  CHECK(*parse_version("1.9.9") < *parse_version("2"));
  CHECK(*parse_version("1") == *parse_version("1.0"));
  CHECK(*parse_version("007") == *parse_version("7"));
  CHECK(parse_version("1.0.0")->text() == "1");
  CHECK(parse_version("0")->text() == "0");
  CHECK(parse_version("01.20")->text() == "1.20");
  for (const char* bad : {"", "1.", ".1", "1..2", "a", "-1", "1_2", "1234567890123456789"}) CHECK_FALSE(parse_version(bad));
}

TEST_CASE("file names: V<version>__<name>.sql and R__<name>.sql, nothing else") {
  auto v = parse_file_name("V12__add_email.sql");
  REQUIRE(v);
  CHECK(v->kind == Kind::versioned);
  CHECK(v->version->text() == "12");
  CHECK(v->description == "add_email");
  auto d = parse_file_name("V1.2__x.sql");
  REQUIRE(d);
  CHECK(d->version->text() == "1.2");
  auto r = parse_file_name("R__views.sql");
  REQUIRE(r);
  CHECK(r->kind == Kind::repeatable);
  CHECK_FALSE(r->version);
  for (const char* bad : {"V1_add.sql", "v1__add.sql", "V__add.sql", "V1__.sql", "Vx__a.sql", "R_views.sql", "1__a.sql",
                          "V1__a.SQL", "U1__undo.sql", "V1__a.sql.bak"})
    CHECK_MESSAGE(!parse_file_name(bad), bad);
}

TEST_CASE("line endings are normalized before the checksum, and the algorithm is named") {
  CHECK(normalize_line_endings("a\r\nb\rc\n") == "a\nb\nc\n");
  CHECK(checksum_of(normalize_line_endings("select 1;\r\n")) == checksum_of("select 1;\n"));
  // sha256("select 1;\n"), as `printf 'select 1;\n' | sha256sum` prints it.
  CHECK(checksum_of("select 1;\n") == "sha256:4a45092ccf992ea92250053a80b931b787924ba61648f420555511b84f10ab6c");
  CHECK(checksum_of("select 1;\n").size() == 7 + 64);
  CHECK(checksum_of("a") != checksum_of("b"));
}

TEST_CASE("the no-transaction header is read from the leading comments only; unknown directives are refused") {
  CHECK(no_transaction_header("-- shardctl:no-transaction\nCREATE INDEX CONCURRENTLY i ON t (a);\n", "f"));
  CHECK(no_transaction_header("\xEF\xBB\xBF-- shardctl:no-transaction  \nselect 1;", "f"));
  CHECK(no_transaction_header("-- add an index\n\n-- shardctl:no-transaction\nselect 1;", "f"));
  CHECK_FALSE(no_transaction_header("select 1;\n-- shardctl:no-transaction\n", "f"));
  CHECK_FALSE(no_transaction_header("select 1;", "f"));
  CHECK(kind_of([] { no_transaction_header("-- shardctl:no-transactions\nselect 1;", "V2__x.sql"); }) == ErrorKind::data);
  CHECK(message_of([] { no_transaction_header("\n  -- shardctl:notx\nselect 1;", "V2__x.sql"); })
            .rfind("V2__x.sql:2:3: unknown directive", 0) == 0);
}

TEST_CASE("load_directory orders versions numerically, then repeatables, and ignores non-.sql files") {
  Scratch s;
  s.write("V10__ten.sql", "select 10;");
  s.write("V2__two.sql", "select 2;\r\n");
  s.write("V1.5__one_five.sql", "-- shardctl:no-transaction\ncreate index concurrently i on t (a);");
  s.write("R__views.sql", "create or replace view v as select 1;");
  s.write("README.md", "not a migration");
  s.write(".V3__hidden.sql", "select 3;");
  auto ms = load_directory(s.dir);
  REQUIRE(ms.size() == 4);
  CHECK(ms[0].file == "V1.5__one_five.sql");
  CHECK(ms[0].no_transaction);
  CHECK(ms[1].file == "V2__two.sql");
  CHECK(ms[1].sql == "select 2;\n");
  CHECK_FALSE(ms[1].no_transaction);
  CHECK(ms[2].file == "V10__ten.sql");
  CHECK(ms[3].file == "R__views.sql");
  CHECK(ms[3].kind == Kind::repeatable);
}

TEST_CASE("load_directory refuses bad names, duplicate versions, empty files; a missing DIR is a usage error") {
  {
    Scratch s;
    s.write("V1__ok.sql", "select 1;");
    s.write("V2_typo.sql", "select 2;");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
    CHECK(message_of([&] { load_directory(s.dir); }).find("V2_typo.sql: not a migration file name") != std::string::npos);
  }
  {
    Scratch s;
    s.write("V1__a.sql", "select 1;");
    s.write("V1.0__b.sql", "select 1;");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
    CHECK(message_of([&] { load_directory(s.dir); }).find("version 1 is also the version of") != std::string::npos);
  }
  {
    Scratch s;
    s.write("V1__empty.sql", "-- nothing here\n\n");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
  }
  Scratch s;
  CHECK(load_directory(s.dir).empty());
  CHECK(kind_of([&] { load_directory(s.dir / "nope"); }) == ErrorKind::usage);
  s.write("file", "x");
  CHECK(kind_of([&] { load_directory(s.dir / "file"); }) == ErrorKind::usage);
}

TEST_CASE("error positions: characters to bytes, bytes to line and column") {
  std::string text = "select 1;\nselect 'é', x;";
  auto off = byte_offset_of_char(text, 23);  // x is the 23rd character
  CHECK(text[off] == 'x');
  CHECK(line_col(text, off) == std::pair<int, int>{2, 13});
  CHECK(line_col(text, 0) == std::pair<int, int>{1, 1});
}
