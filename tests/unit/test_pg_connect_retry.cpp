// Retrying a server that refuses for too many clients (lib/pg/connect_retry.hpp): which libpq
// messages are such a refusal, the backoff's schedule, the budget a DSN gives, and the loop.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "pg/connect_retry.hpp"

using namespace shardctl;
using namespace std::chrono_literals;

TEST_CASE("the refusals for want of connection slots are told from other failures by libpq's message") {
  CHECK(pg::too_many_connections(
      "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: FATAL:  sorry, too many clients already\n"));
  CHECK(pg::too_many_connections("connection to server at \"db1\" (10.0.0.1), port 5432 failed: FATAL:  remaining connection "
                                 "slots are reserved for non-replication superuser connections"));
  CHECK(pg::too_many_connections("FATAL:  remaining connection slots are reserved for roles with the SUPERUSER attribute"));
  CHECK(pg::too_many_connections("FATAL:  too many connections for role \"app\""));
  CHECK(pg::too_many_connections("FATAL:  too many connections for database \"shard_7\""));
  CHECK_FALSE(pg::too_many_connections("connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file or directory"));
  CHECK_FALSE(pg::too_many_connections("FATAL:  database \"x\" does not exist"));
  CHECK_FALSE(pg::too_many_connections("FATAL:  the database system is starting up"));
  CHECK_FALSE(pg::too_many_connections(""));
}

TEST_CASE("the backoff grows by its factor up to its ceiling, each pause jittered within its upper half") {
  pg::Backoff b(42);
  auto ceiling = pg::Backoff::first_ceiling;
  for (int k = 0; k < 12; ++k) {
    CHECK(b.ceiling() == ceiling);
    auto pause = b.next();
    CHECK(pause >= ceiling / 2);
    CHECK(pause <= ceiling);
    ceiling = std::min<std::chrono::milliseconds>(ceiling * pg::Backoff::growth, pg::Backoff::max_ceiling);
  }
  CHECK(b.ceiling() == pg::Backoff::max_ceiling);
}

TEST_CASE("the jitter differs between seeds and repeats for one seed") {
  std::vector<long long> a, b, c;
  pg::Backoff x(1), y(2), z(1);
  for (int k = 0; k < 8; ++k) {
    a.push_back(x.next().count());
    b.push_back(y.next().count());
    c.push_back(z.next().count());
  }
  CHECK(a == c);
  CHECK(a != b);
}

TEST_CASE("the budget is the DSN's connect timeout, else PGCONNECT_TIMEOUT, else the default") {
  unsetenv("PGCONNECT_TIMEOUT");
  CHECK(pg::retry_budget("host=db dbname=x") == pg::connect_timeout_default);
  CHECK(pg::retry_budget("host=db dbname=x connect_timeout=3") == 3s);
  CHECK(pg::retry_budget("host=db connect_timeout=9 dbname=x connect_timeout=2") == 2s);  // libpq keeps the last
  CHECK(pg::retry_budget("host=db connect_timeout=0") == pg::connect_timeout_default);  // never forever
  setenv("PGCONNECT_TIMEOUT", "7", 1);
  CHECK(pg::retry_budget("host=db dbname=x") == 7s);
  CHECK(pg::retry_budget("host=db dbname=x connect_timeout=4") == 4s);
  unsetenv("PGCONNECT_TIMEOUT");
}

TEST_CASE("a refused attempt is tried again until it connects, within the budget") {
  const std::string refused = "FATAL:  sorry, too many clients already";
  std::vector<std::chrono::milliseconds> slept;
  auto sleep = [&](std::chrono::milliseconds d) { slept.push_back(d); };

  SUBCASE("slots free up: connected on the fourth attempt") {
    int n = 0;
    auto out = pg::connect_retrying(5s, [&] { return ++n < 4 ? refused : std::string(); }, sleep);
    CHECK(out.error.empty());
    CHECK_FALSE(out.refused);
    CHECK(out.attempts == 4);
    CHECK(slept.size() == 3);
    for (std::size_t k = 1; k < slept.size(); ++k) CHECK(slept[k] >= slept[k - 1] / 2);
  }
  SUBCASE("another failure is not retried") {
    int n = 0;
    auto out = pg::connect_retrying(5s, [&] { ++n; return std::string("FATAL:  database \"x\" does not exist"); }, sleep);
    CHECK(n == 1);
    CHECK_FALSE(out.refused);
    CHECK(slept.empty());
  }
  SUBCASE("slots never free up: refused once the budget is spent") {
    // The sleeps are the test's; the budget is measured on the clock, so it is kept short.
    auto out = pg::connect_retrying(300ms, [&] { return refused; },
                                    [&](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); slept.push_back(d); });
    CHECK(out.refused);
    CHECK(out.attempts >= 2);
    CHECK(out.waited <= 300ms);
    CHECK(pg::refused_message("cannot connect to shard s1", "host=db dbname=s1", out).find("refused: too many connections") !=
          std::string::npos);
  }
}

TEST_CASE("a refusal is an unavailable Error of its own type") {
  TooManyConnections e("shard s1 refused: too many connections", "hint");
  CHECK(e.kind() == ErrorKind::unavailable);
  CHECK(exit_code_for(e.kind()) == exit_code::unavailable);
  CHECK(refused_for_connections(e));
  CHECK_FALSE(refused_for_connections(unavailable_error("down")));
}
