// The catalog schema, as an ordered list of upgrade steps: step N takes a catalog from
// version N-1 to N. A new release appends a step; it never edits an old one.
#pragma once

#include <string_view>
#include <vector>

namespace shardctl::catalog {

struct SchemaStep {
  int version;
  std::string_view sql;
};

const std::vector<SchemaStep>& schema_steps();

}  // namespace shardctl::catalog
