#include "rebalance/byte_size.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace shardctl::rebalance {

std::optional<std::int64_t> parse_byte_size(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])))) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double mul = 0;
  if (unit.empty() || unit == "B") mul = 1;
  else if (unit == "k" || unit == "K" || unit == "KB" || unit == "KiB") mul = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MiB") mul = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GiB") mul = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TiB") mul = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;
  double bytes = v * mul;
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(bytes));
}

}  // namespace shardctl::rebalance
