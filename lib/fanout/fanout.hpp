// The fan-out executor: runs one piece of work per shard, N shards at a time, and returns one
// outcome per shard. A failure on one shard is that shard's outcome; it never hides the others.
// `schema apply|status|drift|baseline` and `query` all run on it (shardctl-schema(1), shardctl-query(1)).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "core/words.hpp"

namespace shardctl::fanout {

// One shard to run on. `dsn` is the catalog's DSN (no password; libpq finds credentials).
struct Target {
  std::string shard;
  std::string dsn;
  catalog::ShardStatus status = catalog::ShardStatus::online;  // as the catalog says
};

// Which shards a command runs on: every registered shard, those any mapping of `map` routes
// to, or the named ones (`--shards a,b`). Both given: the named shards of that map.
struct Selection {
  std::optional<std::string> map;
  std::vector<std::string> shards;
};

// The targets in shard-name order. Usage Error (64) for an unknown map or shard, or a named
// shard the map does not use. Offline shards are left out unless named; `offline` lists them.
struct Targets {
  std::vector<Target> run;
  std::vector<std::string> offline;
};
Targets select_targets(catalog::Store& store, const Selection& selection);

// "a,b , c" -> {"a","b","c"}; usage Error on an empty name.
std::vector<std::string> split_shard_list(const std::string& text);

struct Policy {
  int parallel = 4;
  // After the first failure no new shard starts; shards already running finish. The shards
  // never started are reported as skipped.
  bool stop_on_failure = false;
};

// refused: the server turned every connection attempt away for want of slots (SQLSTATE 53300)
// until the connect timeout was spent (TooManyConnections); like unreachable, the shard was
// not reached, and exit codes count it as unreachable.
enum class State { ok, failed, unreachable, refused, skipped };
inline constexpr auto state_words =
    words<State>({{State::ok, "ok"}, {State::failed, "failed"}, {State::unreachable, "unreachable"}, {State::refused, "refused"},
                  {State::skipped, "skipped"}})
        .otherwise("failed");
constexpr const auto& words_of(State) noexcept { return state_words; }
using shardctl::operator<<;
using shardctl::to_text;
// Whether the shard was not reached (unreachable or refused).
constexpr bool not_reached(State s) noexcept { return s == State::unreachable || s == State::refused; }

struct Outcome {
  std::string shard;
  State state = State::skipped;
  ErrorKind kind = ErrorKind::internal;  // of the failure
  std::string error;                     // one line; empty when ok or skipped
  std::string hint;
  std::chrono::milliseconds elapsed{0};
  bool ok() const noexcept { return state == State::ok; }
};

// Runs `work(target)` for every target, at most `policy.parallel` at once, starting them in
// target order. An Error thrown by `work` becomes that target's outcome (TooManyConnections ->
// refused, other unavailable ones -> unreachable, anything else -> failed); any other exception is a failed outcome of kind
// internal. `on_done`, when given, is called once per finished or skipped target as it
// finishes, from a worker thread but never two at once (progress lines, streamed reports).
// Outcomes come back in target order.
using Work = std::function<void(const Target&)>;
using Done = std::function<void(const Target&, const Outcome&)>;
std::vector<Outcome> run(const std::vector<Target>& targets, const Policy& policy, const Work& work,
                         const Done& on_done = {});

// The DSN with connect_timeout=`seconds` (replacing the catalog's own, if any) and
// application_name=shardctl: the per-connection timeout every fan-out command takes.
std::string dsn_with_timeout(const std::string& dsn, int seconds);

}  // namespace shardctl::fanout
