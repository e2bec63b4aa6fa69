// How the migration runner writes the COPY statements it streams rows with.
#pragma once

#include <string>
#include <vector>

#include "catalog/names.hpp"

namespace shardctl::migrate {

// "a", "b", ... : quoted column names.
inline std::string column_list(const std::vector<std::string>& cols) {
  std::string out;
  for (const auto& c : cols) out += (out.empty() ? "" : ", ") + catalog::quote_ident(c);
  return out;
}

inline const char* copy_format(bool binary) { return binary ? " (FORMAT binary)" : ""; }

}  // namespace shardctl::migrate
