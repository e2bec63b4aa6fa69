#include "check/rehome.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "catalog/names.hpp"
#include "check/predicates.hpp"
#include "core/error.hpp"
#include "fault/fault.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::check {
namespace {

using catalog::quote_ident;
using catalog::quote_qualified;

struct Sum {
  std::int64_t rows = 0;
  std::string hash = "0";  // numeric as text: exact
};

Sum sum_of(shardio::RawConn& c, const std::string& quoted, const std::string& cols, const std::string& pred) {
  auto r = c.query("SELECT count(*), " + shardio::row_hash_sum() + " FROM (SELECT " + cols + " FROM " + quoted + " t0 WHERE " +
                   pred + ") " + shardio::row_alias);
  return {std::stoll(r[0][0]), r[0][1]};
}

std::string numeric_diff(shardio::RawConn& c, const std::string& a, const std::string& b) {
  return c.query("SELECT ($1::numeric - $2::numeric)::text", {a, b})[0][0];
}

void rollback(shardio::RawConn& c) {
  try {
    c.exec("ROLLBACK");
  } catch (...) {  // connection lost: the server rolled back
  }
}

struct Table {
  const catalog::TableDef* def;
  std::string quoted;
  std::string columns;                      // quoted, comma-separated
  std::vector<std::string> quoted_columns;  // the same, one by one
};

// "p.a, p.b" for prefix p.
std::string prefixed_list(const std::string& prefix, const std::vector<std::string>& quoted_columns) {
  std::string out;
  for (const auto& c : quoted_columns) out += (out.empty() ? "" : ", ") + prefix + "." + c;
  return out;
}

// Lands the source's stray rows of one table on the target, idempotently: they stream into a
// temporary table there; a row whose key the target already has with the same contents is
// taken as landed (a rehome that died between the target's commit and the source's delete),
// one with other contents is a conflict for a person to settle; the rest is inserted. Then
// every moving row must exist identically on the target: count and checksum as on the source.
void land_rows(shardio::RawConn& src, shardio::RawConn& dst, const Table& t, std::size_t index,
               const std::string& src_pred, const Sum& moving, const std::string& source, const std::string& target) {
  std::string tmp = "shardctl_rehome_" + std::to_string(index);
  dst.exec("CREATE TEMP TABLE " + tmp + " ON COMMIT DROP AS SELECT " + t.columns + " FROM " + t.quoted + " WITH NO DATA");
  shardio::pump_copy(src, "COPY (SELECT " + t.columns + " FROM " + t.quoted + " t0 WHERE " + src_pred + ") TO STDOUT (FORMAT binary)",
                     dst, "COPY " + tmp + " (" + t.columns + ") FROM STDIN (FORMAT binary)");
  // Row identity: the primary key, or the whole row when there is none.
  auto pk = shardio::primary_key(dst, t.quoted);
  std::string same_key;
  for (const auto& k : pk) same_key += (same_key.empty() ? "" : " AND ") + ("r." + quote_ident(k) + " = x." + quote_ident(k));
  std::string r_row = "ROW(" + prefixed_list("r", t.quoted_columns) + ")::text";
  std::string x_row = "ROW(" + prefixed_list("x", t.quoted_columns) + ")::text";
  if (same_key.empty()) same_key = r_row + " = " + x_row;
  auto differ = std::stoll(dst.query("SELECT count(*) FROM " + tmp + " r JOIN " + t.quoted + " x ON " + same_key + " WHERE " +
                                     r_row + " <> " + x_row)[0][0]);
  if (differ > 0)
    throw usage_error("cannot rehome strays of " + t.def->name + " from " + source + " to " + target + ": " +
                          std::to_string(differ) + " of them exist on " + target + " with other contents; nothing was changed",
                      "the rows exist on both shards: compare the copies, then remove the stray with "
                      "--fix quarantine or --fix delete");
  // GENERATED ALWAYS identity values move as they are (generated columns are not in t.columns).
  bool identity_always = dst.query("SELECT count(*) FROM pg_attribute WHERE attrelid = $1::regclass AND attidentity = 'a' "
                                   "AND NOT attisdropped",
                                   {t.quoted})[0][0] != "0";
  dst.exec("INSERT INTO " + t.quoted + " (" + t.columns + ")" + (identity_always ? " OVERRIDING SYSTEM VALUE" : "") + " SELECT " + prefixed_list("r", t.quoted_columns) + " FROM " + tmp +
           " r WHERE NOT EXISTS (SELECT 1 FROM " + t.quoted + " x WHERE " + same_key + ")");
  auto landed = dst.query("SELECT count(*), " + shardio::row_hash_sum() + " FROM (SELECT " + prefixed_list("r", t.quoted_columns) +
                          " FROM " + tmp + " r JOIN " + t.quoted + " x ON " + same_key + " AND " + r_row + " = " + x_row + ") " +
                          shardio::row_alias);
  if (std::stoll(landed[0][0]) != moving.rows || numeric_diff(dst, landed[0][1], moving.hash) != "0")
    throw internal_error("rehoming " + t.def->name + " from " + source + " to " + target +
                         ": the target's count or checksum does not match the source's; nothing was changed");
}

// One (source shard, map, target shard) of a rehome: the source's sharded tables of the map
// (parents first) and the rows of each that move: the keys the map routes to the target, less
// those a live operation works on (see stray_predicate).
struct Pair {
  const catalog::LoadedMap& map;
  const std::vector<Table>& tables;
  std::string source, target;
  std::vector<routing::KeyRange> in_flight;

  std::string moving_rows(shardio::RawConn& c, const Table& t) const {
    std::string key = "t0." + quote_ident(*t.def->key_column);
    std::string pred = "(";
    pred += mapped_predicate(c, map, key, [&](const catalog::Mapping& m) {
      return m.shard == target && m.status == catalog::MappingStatus::online;
    });
    pred += " AND NOT ";
    pred += in_ranges(c, map, key, in_flight);
    pred += ")";
    return pred;
  }
};

// Count and checksum of each table's moving rows on the source (in the source's transaction).
std::vector<Sum> moving_sums(shardio::RawConn& src, const Pair& p) {
  std::vector<Sum> moving;
  for (const auto& t : p.tables) moving.push_back(sum_of(src, t.quoted, t.columns, p.moving_rows(src, t)));
  return moving;
}

// Lands every table's moving rows on the target in one transaction, verified, and commits it.
void land_on_target(shardio::RawConn& src, shardio::RawConn& dst, const Pair& p, const std::vector<Sum>& moving) {
  dst.exec("BEGIN");
  try {
    for (std::size_t i = 0; i < p.tables.size(); ++i) {
      const auto& t = p.tables[i];
      if (moving[i].rows == 0) continue;
      if (shardio::table_columns(dst, t.quoted).empty())
        throw usage_error("cannot rehome strays of " + t.def->name + ": the table is missing on shard " + p.target);
      land_rows(src, dst, t, i, p.moving_rows(src, t), moving[i], p.source, p.target);
    }
    dst.exec("COMMIT");
  } catch (...) {
    rollback(dst);
    throw;
  }
}

// Deletes the landed rows from the source, children first (parents cannot go while rows still
// reference them), each table's count as copied; reports each table's rows.
void delete_from_source(shardio::RawConn& src, const Pair& p, const std::vector<Sum>& moving, Report& report) {
  for (std::size_t i = p.tables.size(); i-- > 0;) {
    if (moving[i].rows == 0) continue;
    const auto& t = p.tables[i];
    auto n = std::stoll(src.query("WITH d AS (DELETE FROM " + t.quoted + " t0 WHERE " + p.moving_rows(src, t) +
                                  " RETURNING 1) SELECT count(*) FROM d")[0][0]);
    if (n != moving[i].rows)
      throw internal_error("rehoming " + t.def->name + " from " + p.source + ": deleted " + std::to_string(n) +
                           " rows, copied " + std::to_string(moving[i].rows) +
                           "; the source transaction is rolled back, the copies stay on " + p.target);
    report.fixes.push_back({FixKind::rehome, p.source, t.def->name, p.target, n, false, "strays, verified by count and checksum"});
  }
}

// The source's transaction: tables locked against writes (readers go on) while the rows are
// counted, landed on the target and deleted here. With --dry-run, only counted and reported.
void rehome_pair(shardio::RawConn& src, shardio::RawConn& dst, const Pair& p, const Options& options, Report& report) {
  src.exec("BEGIN");
  try {
    // Writers wait until the rows are gone from here; readers go on.
    for (const auto& t : p.tables) src.exec("LOCK TABLE " + t.quoted + " IN EXCLUSIVE MODE");
    auto moving = moving_sums(src, p);
    std::int64_t total = 0;
    for (const auto& m : moving) total += m.rows;
    if (total == 0) {
      src.exec("ROLLBACK");
      return;
    }
    if (options.dry_run) {
      for (std::size_t i = 0; i < p.tables.size(); ++i)
        if (moving[i].rows > 0)
          report.fixes.push_back({FixKind::rehome, p.source, p.tables[i].def->name, p.target, moving[i].rows, true, "strays"});
      src.exec("ROLLBACK");
      return;
    }
    land_on_target(src, dst, p, moving);
    // A crash here leaves the rows on both shards; the next rehome finds them landed.
    fault::FaultInjector().point("rehome.landed");
    delete_from_source(src, p, moving, report);
    src.exec("COMMIT");
  } catch (...) {
    rollback(src);
    throw;
  }
}

// The source's sharded tables of `map_name` that exist there, parents first, with their columns.
std::vector<Table> source_tables(const Fleet& fleet, shardio::RawConn& src, const std::string& map_name) {
  std::vector<Table> tables;
  std::vector<std::string> quoted;
  for (const auto& t : fleet.sharded_tables)
    if (*t.map == map_name && !shardio::table_columns(src, quote_qualified(t.name)).empty())
      quoted.push_back(quote_qualified(t.name));
  for (const auto& q : shardio::fk_order(src, quoted)) {  // parents first
    auto it = std::find_if(fleet.sharded_tables.begin(), fleet.sharded_tables.end(),
                           [&](const catalog::TableDef& t) { return quote_qualified(t.name) == q; });
    std::string cols;
    std::vector<std::string> quoted_cols;
    for (const auto& c : shardio::table_columns(src, q)) {
      cols += (cols.empty() ? "" : ", ") + quote_ident(c.name);
      quoted_cols.push_back(quote_ident(c.name));
    }
    tables.push_back({&*it, q, cols, quoted_cols});
  }
  return tables;
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
    shardio::RawConn src(src_shard->dsn, "shard " + source);
    src.script(shardio::session_settings);  // row text (and so checksums) as on every server
    std::vector<Table> tables = source_tables(fleet, src, map_name);
    std::set<std::string> targets;
    for (const auto& m : map.mappings)
      if (m.status == catalog::MappingStatus::online && m.shard != source) targets.insert(m.shard);
    auto flying = fleet.in_flight.find(map.map.name);
    for (const auto& target : targets) {
      const catalog::Shard* dst_shard = fleet.shard(target);
      if (!dst_shard || down.count(target) || dst_shard->status != catalog::ShardStatus::online) continue;
      shardio::RawConn dst(dst_shard->dsn, "shard " + target);
      dst.script(shardio::session_settings);
      Pair pair{map, tables, source, target, flying != fleet.in_flight.end() ? flying->second : std::vector<routing::KeyRange>{}};
      rehome_pair(src, dst, pair, options, report);
    }
  }
}

}  // namespace shardctl::check
