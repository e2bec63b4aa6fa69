#include "pg/connect_retry.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "pg/dsn.hpp"

namespace shardctl::pg {

bool too_many_connections(std::string_view message) noexcept {
  // PostgreSQL's texts for ERRCODE_TOO_MANY_CONNECTIONS at connection start (postinit.c,
  // proc.c): "sorry, too many clients already", "remaining connection slots are reserved for
  // non-replication superuser connections" (15; "... for roles with the SUPERUSER attribute" and
  // "... with privileges of the pg_use_reserved_connections role" in 16), "too many connections
  // for role \"r\"", "too many connections for database \"d\"".
  for (std::string_view text : {"sorry, too many clients already", "remaining connection slots are reserved",
                                "too many connections for role", "too many connections for database"})
    if (message.find(text) != std::string_view::npos) return true;
  return false;
}

Backoff::Backoff(std::uint64_t seed) : random_(static_cast<std::minstd_rand::result_type>(seed % 2147483646 + 1)) {}

std::chrono::milliseconds Backoff::next() {
  auto high = ceiling_.count();
  std::uniform_int_distribution<long long> pick(high / 2, high);
  std::chrono::milliseconds pause{pick(random_)};
  ceiling_ = std::min<std::chrono::milliseconds>(ceiling_ * growth, max_ceiling);
  return pause;
}

std::chrono::milliseconds retry_budget(std::string_view dsn) {
  std::string value;
  if (const char* env = std::getenv("PGCONNECT_TIMEOUT")) value = env;
  try {
    for (const auto& s : dsn_settings(dsn, "the connection string"))
      if (s.key == "connect_timeout") value = s.value;
  } catch (...) {  // a DSN libpq cannot parse fails its connection attempt with a clearer message
  }
  long seconds = 0;
  try {
    seconds = value.empty() ? 0 : std::stol(value);
  } catch (...) {
  }
  if (seconds <= 0) return connect_timeout_default;
  return std::chrono::seconds(seconds);
}

Connected connect_retrying(std::chrono::milliseconds budget, const Attempt& attempt, const Sleep& sleep) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + budget;
  Backoff backoff{std::random_device{}()};
  Connected out;
  for (;;) {
    ++out.attempts;
    out.error = attempt();
    out.refused = !out.error.empty() && too_many_connections(out.error);
    if (!out.refused) return out;
    auto pause = backoff.next();
    if (Clock::now() + pause > deadline) return out;
    if (sleep) sleep(pause);
    else std::this_thread::sleep_for(pause);
    out.waited += pause;
  }
}

std::string refused_message(const std::string& role, const std::string& where, const Connected& outcome) {
  std::string msg = outcome.error;
  auto nl = msg.find('\n');
  if (nl != std::string::npos) msg.resize(nl);
  // libpq: 'connection to server on socket "..." failed: FATAL:  sorry, too many clients already'.
  if (auto fatal = msg.find("FATAL:  "); fatal != std::string::npos) msg = msg.substr(fatal + 8);
  auto tenths = outcome.waited.count() / 100;
  return role + " (" + where + ") refused: too many connections (" + msg + "), still after " +
         std::to_string(outcome.attempts) + " attempts over " + std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
}

std::string refused_hint() {
  return "other clients hold the server's connection slots (max_connections); run again when they are free, or "
         "lower --parallel ([defaults] max_connections_per_server); a longer connect timeout (--connect-timeout, or "
         "connect_timeout in the DSN) retries for longer";
}

}  // namespace shardctl::pg
