#include <doctest/doctest.h>

#include "core/error.hpp"
#include "pg/dsn.hpp"

using namespace shardctl;

TEST_CASE("a password in a key=value DSN is found and removed") {
  CHECK(pg::dsn_has_password("host=db1 dbname=x password=s3cret"));
  CHECK_FALSE(pg::dsn_has_password("host=db1 dbname=x"));
  auto clean = pg::redact_dsn("host=db1 dbname=x password=s3cret user=u");
  CHECK(clean.find("s3cret") == std::string::npos);
  CHECK(clean.find("password") == std::string::npos);
  CHECK(clean.find("host=db1") != std::string::npos);
  CHECK(clean.find("user=u") != std::string::npos);
}

TEST_CASE("a password in a URI is found and removed") {
  CHECK(pg::dsn_has_password("postgresql://u:s3cret@db1:5433/x"));
  auto clean = pg::redact_dsn("postgresql://u:s3cret@db1:5433/x");
  CHECK(clean.find("s3cret") == std::string::npos);
  CHECK(clean.find("port=5433") != std::string::npos);
  CHECK(clean.find("dbname=x") != std::string::npos);
}

TEST_CASE("normalize adds a connect timeout unless one is set") {
  CHECK(pg::normalize_dsn("dbname=x").find("connect_timeout=5") != std::string::npos);
  auto kept = pg::normalize_dsn("dbname=x connect_timeout=2");
  CHECK(kept.find("connect_timeout=2") != std::string::npos);
  CHECK(kept.find("connect_timeout=5") == std::string::npos);
}

TEST_CASE("values with spaces and quotes survive a round trip") {
  auto out = pg::redact_dsn("host='/tmp/a b' dbname='it\\'s'");
  auto described = pg::describe_dsn(out);
  CHECK(described.find("host=/tmp/a b") != std::string::npos);
  CHECK(described.find("dbname=it's") != std::string::npos);
}

TEST_CASE("a DSN libpq cannot parse is a usage error that does not echo it") {
  try {
    pg::redact_dsn("host=db1 password='sekret");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("sekret") == std::string::npos);
  }
}

TEST_CASE("describe names where, never a password") {
  auto d = pg::describe_dsn("host=h port=1 dbname=d user=u password=p");
  CHECK(d.find("host=h") != std::string::npos);
  CHECK(d.find("dbname=d") != std::string::npos);
  CHECK(d.find("port=1") != std::string::npos);
  CHECK(d.find("password") == std::string::npos);
  CHECK(d.find("user") == std::string::npos);
}
