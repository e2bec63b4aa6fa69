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

TEST_CASE("a password nested in a dbname connection string is found, at any depth") {
  CHECK(pg::dsn_has_password("dbname='host=h user=postgres password=S3cretPw'"));
  CHECK(pg::dsn_has_password("host=x dbname='postgresql://u:S3cretPw@h/db'"));
  CHECK(pg::dsn_has_password("dbname='dbname=\\'password=S3cretPw\\''"));
  CHECK(pg::dsn_has_password("postgresql://u@h/db?password=S3cretPw"));
  CHECK(pg::dsn_has_password("host=h sslpassword=S3cretPw"));
  CHECK_FALSE(pg::dsn_has_password("dbname='host=h user=postgres'"));
  auto clean = pg::redact_dsn("dbname='host=h user=postgres password=S3cretPw' port=5");
  CHECK(clean.find("S3cretPw") == std::string::npos);
  CHECK(clean.find("host=h") != std::string::npos);
  CHECK(pg::describe_dsn("dbname='host=h password=S3cretPw'").find("S3cretPw") == std::string::npos);
}

TEST_CASE("require_passwordless_dsn refuses every password form with a usage error, never echoing it") {
  for (const char* dsn : {"password=S3cretPw", "dbname='host=h password=S3cretPw'", "postgresql://u:S3cretPw@h/db",
                          "postgresql://u@h/db?password=S3cretPw", "sslpassword=S3cretPw"}) {
    try {
      pg::require_passwordless_dsn(dsn, "--dsn");
      FAIL("accepted " << dsn);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find("S3cretPw") == std::string::npos);
      CHECK(std::string(e.what()).find("--dsn") != std::string::npos);
    }
  }
  pg::require_passwordless_dsn("host=/tmp port=5432 dbname=x", "--dsn");
}

TEST_CASE("a URI whose user part libpq misreads is refused, not stored with the secret in port or host") {
  for (const char* dsn : {"postgresql://@:Zpass99@h2@h:-1/", "postgresql://u@Zpass99@h/db", "port=abc", "port=70000"}) {
    try {
      pg::redact_dsn(dsn);
      FAIL("accepted " << dsn);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find("Zpass99") == std::string::npos);
    }
  }
  CHECK(pg::redact_dsn("host=@abstract,h2 port=5432,") == "host=@abstract,h2 port=5432,");
  CHECK(pg::describe_dsn("postgresql://@:Zpass99@h2@h:-1/").find("Zpass99") == std::string::npos);
}
