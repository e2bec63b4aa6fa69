#include "check/rehome.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "catalog/names.hpp"
#include "check/predicates.hpp"
#include "core/error.hpp"
#include "migrate/shard_schema.hpp"

namespace shardctl::check {
namespace {

using catalog::quote_ident;
using catalog::quote_qualified;

struct Sum {
  std::int64_t rows = 0;
  std::string hash = "0";  // numeric as text: exact
};

Sum sum_of(migrate::RawConn& c, const std::string& quoted, const std::string& cols, const std::string& pred) {
  auto r = c.query("SELECT count(*), coalesce(sum(('x' || substr(md5(x::text), 1, 16))::bit(64)::bigint::numeric), 0) "
                   "FROM (SELECT " + cols + " FROM " + quoted + " t0 WHERE " + pred + ") x");
  return {std::stoll(r[0][0]), r[0][1]};
}

std::string numeric_diff(migrate::RawConn& c, const std::string& a, const std::string& b) {
  return c.query("SELECT ($1::numeric - $2::numeric)::text", {a, b})[0][0];
}

void rollback(migrate::RawConn& c) {
  try {
    c.exec("ROLLBACK");
  } catch (...) {  // connection lost: the server rolled back
  }
}

struct Table {
  const catalog::TableDef* def;
  std::string quoted;
  std::string columns;  // quoted, comma-separated
};

void rehome_pair(const Fleet& fleet, migrate::RawConn& src, migrate::RawConn& dst, const catalog::LoadedMap& map,
                 const std::vector<Table>& tables, const std::string& source, const std::string& target,
                 const Options& options, Report& report) {
  auto flying = fleet.in_flight.find(map.map.name);
  std::vector<routing::KeyRange> in_flight;
  if (flying != fleet.in_flight.end()) in_flight = flying->second;
  // The target's keys, less those a live operation works on (see stray_predicate).
  auto pred_for = [&](migrate::RawConn& c, const Table& t) {
    std::string key = "t0." + quote_ident(*t.def->key_column);
    std::string pred = "(";
    pred += mapped_predicate(c, map, key, [&](const catalog::Mapping& m) {
      return m.shard == target && m.status == "online";
    });
    pred += " AND NOT ";
    pred += in_ranges(c, map, key, in_flight);
    pred += ")";
    return pred;
  };
  std::vector<Sum> moving;
  std::int64_t total = 0;
  src.exec("BEGIN");
  try {
    // Writers wait until the rows are gone from here; readers go on.
    for (const auto& t : tables) src.exec("LOCK TABLE " + t.quoted + " IN EXCLUSIVE MODE");
    for (const auto& t : tables) {
      moving.push_back(sum_of(src, t.quoted, t.columns, pred_for(src, t)));
      total += moving.back().rows;
    }
    if (total == 0) {
      src.exec("ROLLBACK");
      return;
    }
    if (options.dry_run) {
      for (std::size_t i = 0; i < tables.size(); ++i)
        if (moving[i].rows > 0)
          report.fixes.push_back({"rehome", source, tables[i].def->name, target, moving[i].rows, true, "strays"});
      src.exec("ROLLBACK");
      return;
    }
    dst.exec("BEGIN");
    try {
      for (std::size_t i = 0; i < tables.size(); ++i) {
        const auto& t = tables[i];
        if (moving[i].rows == 0) continue;
        if (migrate::table_columns(dst, t.quoted).empty())
          throw usage_error("cannot rehome strays of " + t.def->name + ": the table is missing on shard " + target);
        Sum before = sum_of(dst, t.quoted, t.columns, pred_for(dst, t));
        try {
          migrate::pump_copy(src, "COPY (SELECT " + t.columns + " FROM " + t.quoted + " t0 WHERE " + pred_for(src, t) +
                                      ") TO STDOUT (FORMAT binary)",
                             dst, "COPY " + t.quoted + " (" + t.columns + ") FROM STDIN (FORMAT binary)");
        } catch (const Error& e) {
          // The same key on both shards is a conflict for a person to settle, not a bug.
          if (std::string(e.what()).find("duplicate key") == std::string::npos) throw;
          throw usage_error("cannot rehome strays of " + t.def->name + " from " + source + " to " + target + ": " +
                                e.what() + "; nothing was changed",
                            "the row exists on both shards: compare the copies, then remove the stray with "
                            "--fix quarantine or --fix delete");
        }
        Sum after = sum_of(dst, t.quoted, t.columns, pred_for(dst, t));
        if (after.rows - before.rows != moving[i].rows || numeric_diff(dst, after.hash, before.hash) != moving[i].hash)
          throw internal_error("rehoming " + t.def->name + " from " + source + " to " + target +
                               ": the target's count or checksum does not match the source's; nothing was changed");
      }
      dst.exec("COMMIT");
    } catch (...) {
      rollback(dst);
      throw;
    }
    // Children first: parents cannot go while rows still reference them.
    for (std::size_t i = tables.size(); i-- > 0;) {
      if (moving[i].rows == 0) continue;
      const auto& t = tables[i];
      auto n = std::stoll(src.query("WITH d AS (DELETE FROM " + t.quoted + " t0 WHERE " + pred_for(src, t) +
                                    " RETURNING 1) SELECT count(*) FROM d")[0][0]);
      if (n != moving[i].rows)
        throw internal_error("rehoming " + t.def->name + " from " + source + ": deleted " + std::to_string(n) +
                             " rows, copied " + std::to_string(moving[i].rows) +
                             "; the source transaction is rolled back, the copies stay on " + target);
      report.fixes.push_back({"rehome", source, t.def->name, target, n, false, "strays, verified by count and checksum"});
    }
    src.exec("COMMIT");
  } catch (...) {
    rollback(src);
    throw;
  }
}

}  // namespace

void rehome_strays(const Fleet& fleet, const Options& options, Report& report) {
  std::set<std::string> down;
  for (const auto& u : report.unreachable) down.insert(u.shard);
  std::set<std::pair<std::string, std::string>> with_strays;  // (shard, map)
  for (const auto& f : report.findings)
    if (f.kind == Kind::strays) with_strays.insert({f.shard, f.object});
  for (const auto& [source, map_name] : with_strays) {
    const auto& map = fleet.map(map_name);
    const catalog::Shard* src_shard = fleet.shard(source);
    migrate::RawConn src(src_shard->dsn, "shard " + source);
    std::vector<Table> tables;
    std::vector<std::string> quoted;
    for (const auto& t : fleet.sharded_tables)
      if (*t.map == map_name && !migrate::table_columns(src, quote_qualified(t.name)).empty())
        quoted.push_back(quote_qualified(t.name));
    for (const auto& q : migrate::fk_order(src, quoted)) {  // parents first
      auto it = std::find_if(fleet.sharded_tables.begin(), fleet.sharded_tables.end(),
                             [&](const catalog::TableDef& t) { return quote_qualified(t.name) == q; });
      std::string cols;
      for (const auto& c : migrate::table_columns(src, q)) cols += (cols.empty() ? "" : ", ") + quote_ident(c.name);
      tables.push_back({&*it, q, cols});
    }
    std::set<std::string> targets;
    for (const auto& m : map.mappings)
      if (m.status == "online" && m.shard != source) targets.insert(m.shard);
    for (const auto& target : targets) {
      const catalog::Shard* dst_shard = fleet.shard(target);
      if (!dst_shard || down.count(target) || dst_shard->status != "online") continue;
      migrate::RawConn dst(dst_shard->dsn, "shard " + target);
      rehome_pair(fleet, src, dst, map, tables, source, target, options, report);
    }
  }
}

}  // namespace shardctl::check
