// NULL keys: a row whose key is NULL matches no range, point or hash bucket, so no shard owns
// it and no batch filter selects it consistently. The operator decides what it should be.
#include "catalog/names.hpp"
#include "migrate/preconditions.hpp"

namespace shardctl::migrate {

void check_null_keys(shardio::RawConn& source, const std::string& source_name, const Plan& plan, std::vector<std::string>& problems) {
  for (const auto& t : plan.tables) {
    auto nullable = source.query("SELECT NOT attnotnull FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2",
                                 {t.quoted, t.key_column});
    if (nullable.empty() || nullable[0][0] != "t") continue;  // NOT NULL: nothing to count
    std::string n = source.query("SELECT count(*) FROM " + t.quoted + " WHERE " + catalog::quote_ident(t.key_column) +
                                 " IS NULL")[0][0];
    if (n != "0")
      problems.push_back("table " + t.name + " has " + n + " row(s) with a NULL " + t.key_column + " on " + source_name +
                         "; a NULL key belongs to no shard: fix or delete them first");
  }
}

}  // namespace shardctl::migrate
