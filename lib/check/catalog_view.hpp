// The catalog as the sweeps of one check read it. Every sweep re-reads the catalog before and
// after each pass over its shard (fleet.hpp); read in full each time, a fleet of thousands of
// shards would cost thousands of whole reads, each the size of the fleet. The sweeps share the
// command's one catalog connection (under a lock: no connection per sweep thread) and the last
// view read: a cheap change token (the maps' versions, which every change to a mapping or to a
// shard holding one bumps; the operations live or touched since the check began; the tables and
// xrefs declared) is read each time, and the catalog is read again only when it changed.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "check/fleet.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

class CatalogViews {
 public:
  // `since`: the catalog time the check began (catalog_now).
  CatalogViews(pg::Connection& catalog, std::string since);
  CatalogViews(const CatalogViews&) = delete;
  CatalogViews& operator=(const CatalogViews&) = delete;

  // The catalog now, as load_fleet(catalog, since) reads it: the very view handed out before
  // while the change token is the same.
  std::shared_ptr<const Fleet> current();

  // A view of the catalog read now, for the caller alone (to add exclusions to).
  Fleet load();

  // Runs `body` on the catalog connection, no other thread using it meanwhile.
  void with_catalog(const std::function<void(pg::Connection&)>& body);

  // Full reads of the catalog so far (the first included), for tests and benchmarks.
  int reads() const;

 private:
  std::string token();  // under mutex_

  pg::Connection& catalog_;
  const std::string since_;
  mutable std::mutex mutex_;
  std::string token_;
  std::shared_ptr<const Fleet> view_;
  int reads_ = 0;
};

}  // namespace shardctl::check
