#include "stats/load_file.hpp"

#include <cmath>
#include <unordered_map>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/strings.hpp"

namespace shardctl::stats {
namespace {

// Splits one line into key and weight text; false when it is not two fields.
bool split_line(std::string_view line, std::string& key, std::string& weight) {
  key.clear();
  std::size_t i = 0;
  if (!line.empty() && line[0] == '"') {
    auto quoted = read_double_quoted(line, i);
    if (!quoted) return false;  // unterminated quote
    key = std::move(*quoted);
    if (i >= line.size() || line[i] != ',') return false;
  } else {
    auto comma = line.find(',');
    if (comma == std::string_view::npos) return false;
    key = std::string(line.substr(0, comma));
    i = comma;
  }
  weight = std::string(line.substr(i + 1));
  while (!weight.empty() && (weight.back() == ' ' || weight.back() == '\t')) weight.pop_back();
  while (!weight.empty() && (weight.front() == ' ' || weight.front() == '\t')) weight.erase(0, 1);
  return weight.find(',') == std::string::npos;
}

}  // namespace

std::vector<KeyLoad> parse_load_csv(std::string_view text, const std::string& origin) {
  std::vector<KeyLoad> out;
  std::unordered_map<std::string, int> seen;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    auto where = origin + ":" + std::to_string(lineno);
    std::string key, weight;
    if (!split_line(line, key, weight))
      throw data_error(where + ": expected key,weight", "one key and its load per line, e.g. 42,17.5");
    if (lineno == 1 && key == "key" && weight == "weight") continue;  // header
    if (key.empty()) throw data_error(where + ": empty key");
    double w = 0;
    std::size_t used = 0;
    try {
      w = std::stod(weight, &used);
    } catch (...) {
      used = 0;
    }
    if (weight.empty() || used != weight.size() || !std::isfinite(w) || w < 0)
      throw data_error(where + ": weight '" + weight + "' is not a number >= 0");
    if (auto [it, fresh] = seen.emplace(key, lineno); !fresh)
      throw data_error(where + ": key '" + key + "' was already given on line " + std::to_string(it->second));
    out.push_back(KeyLoad{std::move(key), w, lineno});
  }
  return out;
}

std::vector<KeyLoad> read_load_file(const std::string& path) {
  // Only a regular file (a FIFO would hang, /dev/zero never end), read whole: 256 MiB is over ten
  // million keys. A path that cannot be opened is the option's usage error (64).
  return parse_load_csv(read_input_file(path, {"load file", 256u << 20, ErrorKind::usage, "name a CSV file of key,weight lines"}), path);
}

}  // namespace shardctl::stats
