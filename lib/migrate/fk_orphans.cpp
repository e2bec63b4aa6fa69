// --verify-fk: after a move, an anti-join per foreign key of the moving tables on the target,
// over the moved range only, at index speed (the parent side is probed by its key index).
#include "catalog/names.hpp"
#include "migrate/load_path.hpp"
#include "shardio/key_filter.hpp"

namespace shardctl::migrate {

std::vector<std::string> orphans_in_range(shardio::RawConn& target, const shardio::RouteSpace& space,
                                          const std::vector<PlannedTable>& tables, const routing::KeyRange& range) {
  std::vector<std::string> out;
  for (const auto& t : tables) {
    auto fks = target.query(
        "SELECT c.conname, c.confrelid::regclass::text, "
        "(SELECT string_agg('c.' || quote_ident(ca.attname) || ' IS NOT NULL', ' AND ') FROM unnest(c.conkey) k(n) "
        " JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.n), "
        "(SELECT string_agg('p.' || quote_ident(pa.attname) || ' = c.' || quote_ident(ca.attname), ' AND ') "
        " FROM unnest(c.conkey, c.confkey) k(cn, pn) JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.cn "
        " JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.pn) "
        "FROM pg_constraint c WHERE c.contype = 'f' AND c.conparentid = 0 AND c.conrelid = $1::regclass ORDER BY 1",
        {t.quoted});
    std::string filter =
        shardio::key_filter(target, space, shardio::KeyColumn{"c." + catalog::quote_ident(t.key_column), t.key_own_collation}, range);
    for (const auto& fk : fks) {
      auto n = target.query("SELECT count(*) FROM " + t.quoted + " c WHERE (" + filter + ") AND " + fk[2] +
                            " AND NOT EXISTS (SELECT 1 FROM " + fk[1] + " p WHERE " + fk[3] + ")")[0][0];
      if (n != "0") out.push_back(n + " row(s) of " + t.name + " violate " + fk[0] + " (no parent in " + fk[1] + ")");
    }
  }
  return out;
}

}  // namespace shardctl::migrate
