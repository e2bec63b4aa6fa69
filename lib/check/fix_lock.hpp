// The map data lock a fix takes: `check --fix quarantine|delete|rehome` and `check --restore`
// hold it EXCLUSIVE on every map whose rows they may change, for the whole run, while split,
// merge and move hold it SHARED as long as their process runs an operation (catalog/locks.hpp).
// So a fix never runs beside a move of the same map: whoever comes second gets exit 75.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/fleet.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

class FixLock {
 public:
  // Takes the lock of every map of `fleet` that has sharded tables (a fix cascades along
  // foreign keys, so it may reach any of them), in map id order, without waiting. Throws a
  // locked Error (exit 75) naming the live operations of the first map it cannot lock, after
  // releasing the ones it took. The session-level locks live on `catalog`, which must stay
  // open (and is not reactivated) for as long as this object lives.
  FixLock(pg::Connection& catalog, const Fleet& fleet);
  ~FixLock();
  FixLock(const FixLock&) = delete;
  FixLock& operator=(const FixLock&) = delete;

 private:
  void release() noexcept;
  pg::Connection& catalog_;
  std::vector<std::int64_t> held_;
};

}  // namespace shardctl::check
