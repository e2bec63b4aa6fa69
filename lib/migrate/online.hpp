// Online moves (split, merge and move --online; rebalance apply --online): applications keep
// writing to the moving keys while each batch is copied, and wait (not fail) for a moment at
// its cut-over. Each batch is one logical replication stream from its source to the target
// (shardside/replication.hpp), run by the Runner (runner_online.cpp):
//
//   planned -> streaming   journaled before the first object is created; then the guard's
//                          triggers on the source (no range yet), a publication of the batch's
//                          range, a slot exporting its snapshot, the copy under that snapshot
//                          (the offline batches' COPY pump and digest), a subscription on the
//                          target (disabled)
//   streaming -> copied    journaled with the rows copied; the subscription is enabled
//   catch-up               until the target applies a fresh source position within --max-lag
//   compare ahead          the batch compared at a point both servers reached, but for the
//                          keys the stream changed since, which the target records
//                          (cut_over_verify.hpp); writers go on
//   cut-over               when the lag and those keys predict it fits (cutover_budget_ms):
//                          the batch's range in state cutover on the source: its writers wait;
//                          the transactions that began before it and do not wait on it end;
//                          L = a source WAL position after every visible commit; the target
//                          applies up to L; the rows of the keys changed since the comparison,
//                          compared on both sides; the range goes offline (its writers are
//                          refused and route again), the map flips to the target. Any wait
//                          past --cutover-timeout gives the cut-over up (the range deleted:
//                          writers go on), back to catch-up; after --cutover-tries, exit 75,
//                          resumable.
//   copied -> flipped      journaled with the flip, in the catalog transaction that flips
//   then                   the subscription, slot, publication and the target's record of
//                          keys dropped (before the purge: its deletes must not reach the
//                          target), the purge as offline batches purge (deleting exactly what
//                          was verified, then the fence)
//
// A cancel before the flip drops the batch's objects, deletes its rows from the target and its
// range from the source; after the flip the batch is finished. Object names come from the
// operation id and batch number (shardctl_op_<32 hex>_<batch>), so whatever a killed run
// created is found and dropped by the next one.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace shardctl::migrate {

struct OnlineSettings {
  // Catch-up is over when the target applies everything up to a fresh source position within
  // this long (the lag a cut-over starts from).
  double max_lag_seconds = 1.0;
  // How long a cut-over may make writers wait before it gives up and tries again.
  int cutover_timeout_ms = 2000;
  int cutover_tries = 10;
};

// A cut-over starts only when it predicts that it holds the batch's writers for at most this
// long (and half of --cutover-timeout): the lag the target must apply, and the keys the stream
// changed since the batch was compared (cut_over_verify.hpp), at the rate measured so far.
inline constexpr int cutover_budget_ms = 150;
// A batch waits for a moment that fits at most this many times, then cuts over anyway, held to
// --cutover-timeout.
inline constexpr int max_cutover_deferrals = 20;

// As the operation's args journal it ({"online": {...}}), and back; none when the args have no
// "online" member (an offline operation). Values out of range in the journal are an internal
// error: they were checked when the operation started.
nlohmann::json online_json(const OnlineSettings& s);
std::optional<OnlineSettings> online_from_args(const nlohmann::json& args);

}  // namespace shardctl::migrate
