// Streams keys (one per line) through a Router to "key<TAB>shard" lines, with large buffered
// reads and writes so the map is loaded once and per-key cost is a parse and a search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/router.hpp"

namespace shardctl::lookup {

struct StreamStats {
  std::uint64_t keys = 0;
  std::uint64_t unmapped = 0;  // printed with "-" as the shard
  std::uint64_t offline = 0;   // routed to a mapping that is offline (being moved)
  bool output_closed = false;  // the reader closed the pipe before the end
};

// Reads `in_fd` to its end and writes to `out_fd`. `shard_names[i]` is the name printed for
// shard index i. A key that does not parse throws a usage Error naming the input line.
StreamStats stream_lookup(const routing::Router& router, const std::vector<std::string>& shard_names,
                          int in_fd, int out_fd, const std::string& input_name = "stdin");

}  // namespace shardctl::lookup
