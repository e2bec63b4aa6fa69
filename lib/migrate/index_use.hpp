// How the source reads a batch for its copy: in primary-key order (the target's indexes then
// grow at their right edge), and as a stream where an index allows it (index_use.cpp).
#pragma once

#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::migrate {

// Whether `select` (a batch's read: a key filter, ORDER BY the primary key) runs on `source`,
// with sorts disabled, as a scan through an index condition that sorts nothing. Then its rows
// stream as the index finds them; with sorts allowed, the planner may prefer a bitmap scan and
// a sort, which returns no row before it has read the whole batch.
bool streams_in_order_without_sort(shardio::RawConn& source, const std::string& select);

// enable_sort off on `conn` while it lives: for a read streams_in_order_without_sort() accepted.
// A session setting, so it also holds inside a transaction the caller has open (the online
// copy's snapshot); the destructor resets it, and a transaction that fails undoes it anyway.
class SortsOff {
 public:
  explicit SortsOff(shardio::RawConn& conn);
  ~SortsOff();
  SortsOff(const SortsOff&) = delete;
  SortsOff& operator=(const SortsOff&) = delete;

 private:
  shardio::RawConn& conn_;
};

}  // namespace shardctl::migrate
