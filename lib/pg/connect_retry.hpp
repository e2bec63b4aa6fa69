// Connecting to a server whose connection slots are all taken: PostgreSQL refuses at once with
// SQLSTATE 53300 ("sorry, too many clients already", "remaining connection slots are reserved
// for ...", "too many connections for role/database"), and a slot is often free a moment later.
// Every shardctl connection (pg::Connection, shardio::RawConn) connects through
// connect_retrying(): such a refusal is tried again after a jittered, growing pause until the
// connection's connect timeout is spent, and only then reported, as TooManyConnections
// (core/error.hpp), never as an unreachable server (shardctl(1), CONNECTIONS).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>

namespace shardctl::pg {

// Whether libpq's message for a failed connection is a refusal for want of slots (53300). At
// connect time libpq gives the server's message but no SQLSTATE (no PGresult exists), so the
// message is what tells it; the server sends these in English whatever lc_messages says, as
// it has not loaded the database's settings yet when it refuses.
bool too_many_connections(std::string_view libpq_message) noexcept;

// The pauses between attempts: exponential, each drawn at random between half and all of its
// ceiling so that clients refused together do not come back together.
class Backoff {
 public:
  static constexpr std::chrono::milliseconds first_ceiling{40};
  static constexpr std::chrono::milliseconds max_ceiling{1000};
  static constexpr int growth = 2;

  // `seed`: the jitter's; tests give a fixed one, connections a random one.
  explicit Backoff(std::uint64_t seed);
  // The next pause, within [ceiling / 2, ceiling]; the ceiling grows by `growth` per call up to
  // max_ceiling.
  std::chrono::milliseconds next();
  std::chrono::milliseconds ceiling() const noexcept { return ceiling_; }

 private:
  std::minstd_rand random_;
  std::chrono::milliseconds ceiling_ = first_ceiling;
};

// How long refusals of a connection to `dsn` are retried: its connect timeout as libpq reads it
// (the last connect_timeout of the DSN, else PGCONNECT_TIMEOUT), or connect_timeout_default when
// neither sets one or it is 0 (libpq's "wait forever" would retry forever).
inline constexpr std::chrono::seconds connect_timeout_default{5};
std::chrono::milliseconds retry_budget(std::string_view dsn);

// What one connection attempt gave: empty when it connected, else libpq's message.
using Attempt = std::function<std::string()>;

// The outcome of connect_retrying.
struct Connected {
  std::string error;  // empty: connected; else the last attempt's message
  bool refused = false;  // the last attempt was refused for want of slots (too_many_connections)
  int attempts = 0;
  std::chrono::milliseconds waited{0};  // paused between attempts, in all
};

// Runs `attempt` until it connects, fails for another reason, or was refused for want of slots
// with no time left in `budget` for another pause. `sleep` is the pause (tests pass their own).
using Sleep = std::function<void(std::chrono::milliseconds)>;
Connected connect_retrying(std::chrono::milliseconds budget, const Attempt& attempt, const Sleep& sleep = {});

// The one-line message and hint of a refusal that outlasted its retries, for `role` (the
// connection's name: "shard s1") at `where` (describe_dsn).
std::string refused_message(const std::string& role, const std::string& where, const Connected& outcome);
std::string refused_hint();

}  // namespace shardctl::pg
