// What the C++ integration tests (itest_*.cpp) share: a libpq connection to the fresh database
// run_cxx_test.sh names in SHARDCTL_TEST_DSN, as UTF-8. Without it a test fails, never skips,
// so that a broken fixture cannot pass as green.
#pragma once

#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace itest {

struct PgConnClose {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
struct PgResultClear {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, PgConnClose>;
using Result = std::unique_ptr<PGresult, PgResultClear>;

// The fresh database's connection string; the test fails without it.
inline std::string test_dsn() {
  const char* dsn = std::getenv("SHARDCTL_TEST_DSN");
  REQUIRE_MESSAGE(dsn != nullptr, "SHARDCTL_TEST_DSN is not set: run this test through ctest (run_cxx_test.sh)");
  return dsn;
}

inline Conn connect() {
  Conn conn(PQconnectdb(test_dsn().c_str()));
  REQUIRE_MESSAGE(PQstatus(conn.get()) == CONNECTION_OK, std::string(PQerrorMessage(conn.get())));
  // Text is compared as UTF-8 bytes; any other client encoding would convert it first.
  REQUIRE_MESSAGE(PQsetClientEncoding(conn.get(), "UTF8") == 0, std::string(PQerrorMessage(conn.get())));
  return conn;
}

}  // namespace itest
