// Small string helpers that several capability folders need (one definition, so a unity
// build of a folder never sees two).
#pragma once

#include <string>
#include <vector>

namespace shardctl {

// The parts with `sep` between them ("a, b, c").
inline std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace shardctl
