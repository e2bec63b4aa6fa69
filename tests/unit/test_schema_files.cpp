#include <doctest/doctest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "schema/files.hpp"
#include "support.hpp"

using namespace shardctl;
using namespace shardctl::schema;
namespace fs = std::filesystem;

namespace {
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
  test::ScratchDir s;
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
    test::ScratchDir s;
    s.write("V1__ok.sql", "select 1;");
    s.write("V2_typo.sql", "select 2;");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
    CHECK(message_of([&] { load_directory(s.dir); }).find("V2_typo.sql: not a migration file name") != std::string::npos);
  }
  {
    test::ScratchDir s;
    s.write("V1__a.sql", "select 1;");
    s.write("V1.0__b.sql", "select 1;");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
    CHECK(message_of([&] { load_directory(s.dir); }).find("version 1 is also the version of") != std::string::npos);
  }
  {
    test::ScratchDir s;
    s.write("V1__empty.sql", "-- nothing here\n\n");
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
  }
  test::ScratchDir s;
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

TEST_CASE("migration text: a leading BOM is left out (and of the checksum), NUL bytes and invalid UTF-8 are refused") {
  CHECK(migration_text("\xEF\xBB\xBFselect 1;\r\n", "V1__a.sql") == "select 1;\n");
  std::string nul("select 1;\nselect 'x\0';", 22);
  CHECK(message_of([&] { migration_text(nul, "V1__a.sql"); }).rfind("V1__a.sql:2:10: a NUL byte", 0) == 0);
  CHECK(message_of([] { migration_text("select 1;\n  select '\xff';", "V1__a.sql") ; })
            .rfind("V1__a.sql:2:11: not valid UTF-8 (byte 0xFF)", 0) == 0);
  CHECK(kind_of([] { migration_text("select '\xC0\xAF';", "f"); }) == ErrorKind::data);  // overlong
  CHECK(kind_of([] { migration_text("\xFF\xFEs\0e\0", "f"); }) == ErrorKind::data);     // UTF-16
  CHECK(migration_text("select 'é';", "f") == "select 'é';");
  test::ScratchDir s;
  s.write("V1__bom.sql", "\xEF\xBB\xBF" "create table t (a int);\n");
  s.write("V2__plain.sql", "create table t (a int);\n");
  auto ms = load_directory(s.dir);
  REQUIRE(ms.size() == 2);
  CHECK(ms[0].checksum == ms[1].checksum);
  CHECK(ms[0].checksum_with_bom == checksum_of("\xEF\xBB\xBF" "create table t (a int);\n"));
  CHECK_FALSE(ms[1].checksum_with_bom);
}

TEST_CASE("names meant as migrations must be migrations; others are left alone") {
  for (const char* yes : {"V5__x.sql", "V5_x.sql", "v5__x.sql", "V1__a.SQL", "V5__x.sql~", "V5__x.txt", "R__v.sql",
                          "r__v.txt", "R_v", "notes.sql", "V_5.sql"})
    CHECK_MESSAGE(looks_like_migration(yes), yes);
  for (const char* no : {"README.md", "Readme", "Vendor", "V", ".V5__x.sql", "rollback.txt", "notes/", "x.sql.orig"})
    CHECK_MESSAGE(!looks_like_migration(no), no);
}

TEST_CASE("load_directory refuses what is named like a migration and is not a regular file, or leads out of DIR") {
  auto refused = [](const test::ScratchDir& s, const std::string& what) {
    CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
    auto msg = message_of([&] { load_directory(s.dir); });
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  };
  {
    test::ScratchDir s;
    fs::create_directory(s.dir / "V5__x.sql");
    refused(s, "V5__x.sql: a directory, not a migration file");
  }
  {
    test::ScratchDir s;
    REQUIRE(mkfifo((s.dir / "V5__x.sql").c_str(), 0600) == 0);
    refused(s, "V5__x.sql: a FIFO, not a migration file");  // and does not wait for a writer
  }
  {
    test::ScratchDir s;
    fs::create_symlink("V4__gone.sql", s.dir / "V5__x.sql");
    refused(s, "V5__x.sql: a symbolic link to 'V4__gone.sql', which does not exist");
  }
  {
    test::ScratchDir s;
    test::ScratchDir outside;
    outside.write("secret.sql", "select 1;");
    fs::create_symlink(outside.dir / "secret.sql", s.dir / "V5__x.sql");
    refused(s, "V5__x.sql: a symbolic link to '" + (fs::canonical(outside.dir) / "secret.sql").string() +
                   "', outside the migration directory");
  }
  {
    test::ScratchDir s;
    s.write("V5__x.sql~", "select 1;");
    refused(s, "V5__x.sql~: not a migration file name");
  }
  {
    test::ScratchDir s;
    s.write("V5__\xff.sql", "select 1;");
    refused(s, "V5__\\xFF.sql: the file name is not valid UTF-8");
  }
  {
    test::ScratchDir s;  // links that stay inside DIR are followed
    fs::create_directory(s.dir / "shared");
    s.write("shared/common.sql", "create table c (a int);");
    s.write("V1__a.sql", "select 1;");
    fs::create_symlink("shared/common.sql", s.dir / "V2__common.sql");
    fs::create_symlink("V1__a.sql", s.dir / "R__again.sql");
    auto ms = load_directory(s.dir);
    REQUIRE(ms.size() == 3);
    CHECK(ms[1].file == "V2__common.sql");
    CHECK(ms[1].sql == "create table c (a int);");
    CHECK(ms[2].file == "R__again.sql");
  }
}

TEST_CASE("transaction control in a file is refused with its position, in either kind of file") {
  test::ScratchDir s;
  s.write("V1__a.sql", "create table t (a int);\n  commit;\ninsert into t values (1);\n");
  CHECK(kind_of([&] { load_directory(s.dir); }) == ErrorKind::data);
  CHECK(message_of([&] { load_directory(s.dir); }).find("V1__a.sql:2:3: COMMIT: a migration file must not control transactions") !=
        std::string::npos);
  test::ScratchDir n;
  n.write("V1__a.sql", "-- shardctl:no-transaction\nbegin;\ncreate index concurrently i on t (a);\n");
  CHECK(message_of([&] { load_directory(n.dir); }).find("V1__a.sql:2:1: BEGIN:") != std::string::npos);
  test::ScratchDir ok;
  ok.write("V1__a.sql", "-- commit;\ncreate function f() returns int language plpgsql as $$ begin return 1; end $$;\n"
                        "select 'rollback';\n");
  CHECK(load_directory(ok.dir).size() == 1);
}

TEST_CASE("a file's kind has the word JSON has always shown") {
  CHECK(to_text(Kind::versioned) == "versioned");
  CHECK(to_text(Kind::repeatable) == "repeatable");
}
