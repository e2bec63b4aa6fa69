// `stats collect --load-file CSV`: per-key load from the application's own metrics, one
// `key,weight` line per key. A bad line is a data Error (65) naming file:line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardctl::stats {

struct KeyLoad {
  std::string key;  // as written; parsed by the map's key type when applied
  double weight = 0;
  int line = 0;
};

// Parses CSV text: `key,weight` per line; blank lines and lines starting with '#' are skipped,
// as is a first line `key,weight` (a header). A key may be double-quoted ("a,b" with "" for a
// quote). The weight is a finite number >= 0. A key given twice is an error.
std::vector<KeyLoad> parse_load_csv(std::string_view text, const std::string& origin);
std::vector<KeyLoad> read_load_file(const std::string& path);

}  // namespace shardctl::stats
