// pg::server_key (lib/pg/dsn.hpp): the server a DSN connects to, the key fan-outs bound their
// connections by. Databases of one server share it; anything else keeps them apart.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/error.hpp"
#include "pg/dsn.hpp"

using namespace shardctl;

namespace {
// The PG* variables are the operator's; the tests set the ones they need.
struct CleanEnvironment {
  CleanEnvironment() {
    for (const char* v : {"PGHOST", "PGHOSTADDR", "PGPORT", "PGSERVICE"}) unsetenv(v);
  }
  ~CleanEnvironment() {
    for (const char* v : {"PGHOST", "PGHOSTADDR", "PGPORT", "PGSERVICE"}) unsetenv(v);
  }
};
}  // namespace

TEST_CASE("databases of one server share a key; another host or port is another server") {
  CleanEnvironment env;
  auto a = pg::server_key("host=/run/pg port=6401 user=postgres dbname=fs_1");
  CHECK(a == pg::server_key("host=/run/pg port=6401 dbname=fs_3 connect_timeout=5 application_name=x"));
  CHECK(a == pg::server_key("dbname=fs_9 port=6401 host=/run/pg"));
  CHECK(a != pg::server_key("host=/run/pg port=6402 dbname=fs_1"));
  CHECK(a != pg::server_key("host=/other port=6401 dbname=fs_1"));
  CHECK(pg::server_key("postgresql://u@db1:5433/x") == pg::server_key("host=db1 port=5433 dbname=y"));
}

TEST_CASE("hostaddr wins over host; the last value of a keyword counts; a dbname is only a name") {
  CleanEnvironment env;
  CHECK(pg::server_key("host=db1 hostaddr=10.0.0.1 port=5432") == "10.0.0.1:5432");
  CHECK(pg::server_key("host=db1 port=5432 port=5433") == "db1:5433");
  // PQconnectdb does not expand a connection string in dbname (psql's PQconnectdbParams does).
  CHECK(pg::server_key("host=db1 dbname='host=db2 port=6000 dbname=x'") == "db1:5432");
}

TEST_CASE("missing parts come from the environment, then libpq's defaults") {
  CleanEnvironment env;
  CHECK(pg::server_key("dbname=x") == "local:5432");
  CHECK(pg::server_key("host=db1 dbname=x") == "db1:5432");
  setenv("PGPORT", "6543", 1);
  setenv("PGHOST", "envhost", 1);
  CHECK(pg::server_key("dbname=x") == "envhost:6543");
  CHECK(pg::server_key("host=db1 dbname=x") == "db1:6543");
  unsetenv("PGHOST");
  CHECK(pg::server_key("service=prod dbname=x") == "service=prod:6543");
}

TEST_CASE("a DSN libpq cannot parse is a usage error") {
  CHECK_THROWS_AS(pg::server_key("host=db1 port=abc"), Error);
  CHECK_THROWS_AS(pg::server_key("not a dsn"), Error);
}
