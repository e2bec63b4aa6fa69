#include "archive/xref_children.hpp"

#include <algorithm>

namespace shardctl::archive {

XrefChildren xref_children(catalog::Store& store) {
  auto tables = store.list_tables();
  XrefChildren out;
  for (auto& x : store.list_xrefs()) {
    bool colocated = std::any_of(tables.begin(), tables.end(), [&](const catalog::TableDef& t) {
      return t.name == x.child_table && t.kind == catalog::TableKind::sharded && t.map == x.map && t.key_column == x.route_column;
    });
    (colocated ? out.same_shard : out.elsewhere).push_back(std::move(x));
  }
  return out;
}

}  // namespace shardctl::archive
