// Store: the catalog's CRUD. Constraint checks live in the catalog schema itself; the checks
// here exist to give an operator a precise message before the database would refuse.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"
#include "pg/dsn.hpp"
#include "routing/hash_space.hpp"

namespace shardctl::catalog {
using routing::KeyType;
using routing::MapKind;

namespace {

std::optional<std::string> opt_text(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<std::string>();
}

Shard shard_from(const pqxx::row& r) {
  return Shard{r["shard_id"].as<std::int64_t>(), r["name"].as<std::string>(), r["dsn"].as<std::string>(),
               read_word<ShardStatus>(r["status"].as<std::string>()), opt_text(r["replication_dsn"]),
               opt_text(r["app_dsn"])};
}

constexpr const char* shard_columns = "shard_id, name, dsn, status, replication_dsn, app_dsn";

// A replication or application DSN as stored: none for none or "", else checked like a shard's
// DSN (no password) and kept in key=value form. `what`: "replication DSN", "application DSN".
std::optional<std::string> stored_extra_dsn(const std::optional<std::string>& dsn, const std::string& what,
                                            const std::string& shard) {
  if (!dsn || dsn->empty()) return std::nullopt;
  pg::require_passwordless_dsn(*dsn, "the " + what + " of shard " + shard);
  return pg::redact_dsn(*dsn);
}
std::optional<std::string> stored_replication_dsn(const std::optional<std::string>& dsn, const std::string& shard) {
  return stored_extra_dsn(dsn, "replication DSN", shard);
}
std::optional<std::string> stored_app_dsn(const std::optional<std::string>& dsn, const std::string& shard) {
  return stored_extra_dsn(dsn, "application DSN", shard);
}

Map map_from(const pqxx::row& r) {
  return Map{r["map_id"].as<std::int64_t>(), r["name"].as<std::string>(),
             parse_word<routing::MapKind>(r["kind"].as<std::string>()),
             routing::parse_key_type(r["key_type"].as<std::string>())};
}

// Shards and maps are read the same way: all of them by name, or the one an operator names,
// an unknown name being a usage error that says where the names are listed.
template <class Row>
struct NamedRows {
  const char* select;  // the columns FROM the table
  Row (*from)(const pqxx::row&);
  const char* noun;  // "shard": "unknown shard 'x'", "`shardctl shard list` shows the shards"

  std::vector<Row> all(pqxx::work& tx) const {
    std::vector<Row> out;
    for (const auto& r : tx.exec(std::string(select) + " ORDER BY name")) out.push_back(from(r));
    return out;
  }

  Row named(pqxx::work& tx, const std::string& name) const {
    auto r = tx.exec_params(std::string(select) + " WHERE name = $1", name);
    if (r.empty())
      throw usage_error("unknown " + std::string(noun) + " '" + name + "'",
                        "`shardctl " + std::string(noun) + " list` shows the " + noun + "s");
    return from(r[0]);
  }

  // The same, each in a read transaction of its own.
  std::vector<Row> all(pg::Connection& conn) const {
    std::vector<Row> out;
    conn.read([&](pqxx::work& tx) { out = all(tx); });
    return out;
  }

  Row named(pg::Connection& conn, const std::string& name) const {
    std::optional<Row> out;
    conn.read([&](pqxx::work& tx) { out = named(tx, name); });
    return *out;
  }
};

constexpr NamedRows<Shard> shard_rows{"SELECT shard_id, name, dsn, status, replication_dsn, app_dsn FROM shardctl.shards",
                                      shard_from, "shard"};
constexpr NamedRows<Map> map_rows{"SELECT map_id, name, kind, key_type FROM shardctl.maps", map_from, "map"};

// Columns that read a mapping's range back as text bounds, whichever column holds it.
constexpr const char* mapping_select =
    "SELECT m.mapping_id, mp.name AS map, mp.kind, mp.key_type, s.name AS shard, m.status, "
    "m.is_point, "
    "coalesce(lower(m.int_range)::text, lower(m.text_range)::text, lower(m.uuid_range)::text) AS low, "
    "coalesce(upper(m.int_range)::text, upper(m.text_range)::text, upper(m.uuid_range)::text) AS high "
    "FROM shardctl.mappings m JOIN shardctl.maps mp USING (map_id) "
    "JOIN shardctl.shards s USING (shard_id) ";

constexpr const char* mapping_order =
    " ORDER BY mp.name, lower(m.int_range) NULLS FIRST, lower(m.text_range) NULLS FIRST, "
    "lower(m.uuid_range) NULLS FIRST";

Mapping mapping_from(const pqxx::row& r) {
  Mapping m;
  m.id = r["mapping_id"].as<std::int64_t>();
  m.map = r["map"].as<std::string>();
  m.shard = r["shard"].as<std::string>();
  m.status = read_word<MappingStatus>(r["status"].as<std::string>());
  m.is_point = r["is_point"].as<bool>();
  KeyType type = bound_type(parse_word<routing::MapKind>(r["kind"].as<std::string>()),
                            routing::parse_key_type(r["key_type"].as<std::string>()));
  if (auto low = opt_text(r["low"])) m.range.low = routing::parse_key(type, *low);
  if (auto high = opt_text(r["high"]); high && !m.is_point) m.range.high = routing::parse_key(type, *high);
  return m;
}

std::string range_text_of(const Mapping& m) {
  return m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range);
}

}  // namespace

Store::Store(pg::Connection& conn, Writes writes) : conn_(conn), writes_(writes) {
  int version = 0;
  conn_.read([&](pqxx::work& tx) { version = read_catalog_version(tx); });
  if (version == 0)
    throw usage_error("no shardctl catalog in " + conn_.where(),
                      "run `shardctl init` to create it, or check --catalog / SHARDCTL_CATALOG");
  refuse_newer(version);
  if (version < schema_version)
    throw data_error("the catalog has schema version " + std::to_string(version) +
                         ", older than this shardctl (" + std::to_string(schema_version) + ")",
                     "run `shardctl init` to upgrade it");
}

// ---- shards -------------------------------------------------------------------------------

Shard Store::add_shard(const std::string& name, const std::string& dsn, ShardStatus status,
                       const std::optional<std::string>& replication_dsn, const std::optional<std::string>& app_dsn) {
  require_name("shard", name);
  pg::require_passwordless_dsn(dsn, "the DSN of shard " + name);
  std::string clean = pg::redact_dsn(dsn);
  Shard out{0, name, clean, status, stored_replication_dsn(replication_dsn, name), stored_app_dsn(app_dsn, name)};
  conn_.transact([&](pqxx::work& tx) {
    auto existing = tx.exec_params("SELECT 1 FROM shardctl.shards WHERE name = $1", name);
    if (!existing.empty())
      throw usage_error("shard " + name + " already exists", "see `shardctl shard show " + name + "`");
    if (previewing()) return;
    out = shard_from(tx.exec_params1(
        "INSERT INTO shardctl.shards (name, dsn, status, replication_dsn, app_dsn) VALUES ($1, $2, $3, $4, $5) "
        "RETURNING " + std::string(shard_columns),
        name, clean, std::string(to_text(status)), out.replication_dsn, out.app_dsn));
  });
  return out;
}

std::vector<Shard> Store::list_shards() { return shard_rows.all(conn_); }

Shard Store::get_shard(const std::string& name) { return shard_rows.named(conn_, name); }

Shard Store::set_shard(const std::string& name, const ShardChange& change) {
  Shard out = get_shard(name);
  if (change.status) out.status = *change.status;
  if (change.replication_dsn) out.replication_dsn = stored_replication_dsn(change.replication_dsn, name);
  if (change.app_dsn) out.app_dsn = stored_app_dsn(change.app_dsn, name);
  if (previewing()) return out;
  // Only what the change names is written: two `shard set` runs that change different fields
  // both keep theirs.
  std::optional<std::string> status;
  if (change.status) status = std::string(to_text(*change.status));
  conn_.transact([&](pqxx::work& tx) {
    out = shard_from(tx.exec_params1(
        "UPDATE shardctl.shards SET status = coalesce($2, status), "
        "replication_dsn = CASE WHEN $3 THEN $4 ELSE replication_dsn END, "
        "app_dsn = CASE WHEN $5 THEN $6 ELSE app_dsn END WHERE name = $1 RETURNING " +
            std::string(shard_columns),
        name, status, change.replication_dsn.has_value(), out.replication_dsn, change.app_dsn.has_value(), out.app_dsn));
  });
  return out;
}

void Store::remove_shard(const std::string& name, bool force) {
  Shard shard = get_shard(name);
  conn_.transact([&](pqxx::work& tx) {
    auto used = tx.exec_params1(
        "SELECT count(*), string_agg(DISTINCT mp.name, ', ') FROM shardctl.mappings m "
        "JOIN shardctl.maps mp USING (map_id) WHERE m.shard_id = $1",
        shard.id);
    auto count = used[0].as<std::int64_t>();
    if (count > 0 && !force)
      throw usage_error("shard " + name + " still holds " + std::to_string(count) +
                            " mapping(s) of map(s) " + used[1].as<std::string>(),
                        "move its data away first, or pass --force to drop its mappings from the "
                        "catalog (shard data is never touched)");
    if (previewing()) return;
    tx.exec_params("DELETE FROM shardctl.mappings WHERE shard_id = $1", shard.id);
    tx.exec_params("DELETE FROM shardctl.shards WHERE shard_id = $1", shard.id);
  });
}

// ---- maps ---------------------------------------------------------------------------------

namespace {
Mapping insert_mapping(pqxx::work& tx, const Map& map, const Shard& shard, const RangeParams& p, bool is_point,
                       const routing::KeyRange& range, bool preview);
Shard shard_in(pqxx::work& tx, const std::string& name);
}  // namespace

CreatedMap Store::create_map(const std::string& name, MapKind kind, KeyType key_type,
                             const std::vector<std::string>& hash_shards) {
  require_name("map", name);
  if (!hash_shards.empty() && kind != MapKind::hash)
    throw usage_error("--shards spreads the hash space of a hash map; map " + name + " is a " +
                          std::string(to_text(kind)) + " map",
                      "add ranges or points with `shardctl mapping add`");
  auto buckets = hash_shards.empty() ? std::vector<routing::KeyRange>{}
                                     : routing::even_hash_ranges(static_cast<int>(hash_shards.size()));
  CreatedMap out;
  out.map = Map{0, name, kind, key_type};
  conn_.transact([&](pqxx::work& tx) {
    if (!tx.exec_params("SELECT 1 FROM shardctl.maps WHERE name = $1", name).empty())
      throw usage_error("map " + name + " already exists", "see `shardctl map show " + name + "`");
    std::vector<Shard> shards;
    for (const auto& s : hash_shards) shards.push_back(shard_in(tx, s));  // all known before anything changes
    if (!previewing())
      out.map = map_from(tx.exec_params1(
          "INSERT INTO shardctl.maps (name, kind, key_type) VALUES ($1, $2, $3) "
          "RETURNING map_id, name, kind, key_type",
          name, std::string(to_text(kind)), std::string(to_text(key_type))));
    for (std::size_t i = 0; i < buckets.size(); ++i)
      out.mappings.push_back(
          insert_mapping(tx, out.map, shards[i], range_params(buckets[i]), false, buckets[i], previewing()));
  });
  return out;
}

std::vector<Map> Store::list_maps() { return map_rows.all(conn_); }

Map Store::get_map(const std::string& name) { return map_rows.named(conn_, name); }

void Store::drop_map(const std::string& name, bool force) {
  Map map = get_map(name);
  conn_.transact([&](pqxx::work& tx) {
    auto deps = tx.exec_params1(
        "SELECT (SELECT count(*) FROM shardctl.mappings WHERE map_id = $1), "
        "       (SELECT count(*) FROM shardctl.tables WHERE map_id = $1), "
        "       (SELECT count(*) FROM shardctl.xrefs WHERE map_id = $1), "
        "       (SELECT count(*) FROM shardctl.operations WHERE map_id = $1 "
        "          AND " + operation_is_live() + ")",
        map.id);
    auto mappings = deps[0].as<std::int64_t>(), tables = deps[1].as<std::int64_t>(),
         xrefs = deps[2].as<std::int64_t>(), ops = deps[3].as<std::int64_t>();
    if (ops > 0)
      throw locked_error("map " + name + " has " + std::to_string(ops) + " unfinished operation(s)",
                         "wait for them, or cancel them with `shardctl op cancel ID`");
    if ((mappings || tables || xrefs) && !force)
      throw usage_error("map " + name + " is still used by " + std::to_string(mappings) + " mapping(s), " +
                            std::to_string(tables) + " table(s) and " + std::to_string(xrefs) + " xref(s)",
                        "remove them first, or pass --force to drop them from the catalog with the map "
                        "(shard data is never touched)");
    if (previewing()) return;
    tx.exec_params("DELETE FROM shardctl.xrefs WHERE map_id = $1", map.id);
    tx.exec_params(
        "DELETE FROM shardctl.xrefs WHERE child_table IN (SELECT name FROM shardctl.tables WHERE map_id = $1) "
        "OR parent_table IN (SELECT name FROM shardctl.tables WHERE map_id = $1)",
        map.id);
    tx.exec_params("DELETE FROM shardctl.tables WHERE map_id = $1", map.id);
    tx.exec_params("DELETE FROM shardctl.operations WHERE map_id = $1", map.id);
    tx.exec_params("DELETE FROM shardctl.maps WHERE map_id = $1", map.id);
  });
}

// ---- mappings -----------------------------------------------------------------------------

namespace {

Shard shard_in(pqxx::work& tx, const std::string& name) { return shard_rows.named(tx, name); }

// Inserts a mapping after naming any mapping in its way. With `preview`, returns the mapping it
// would insert (id 0) once the same checks passed.
Mapping insert_mapping(pqxx::work& tx, const Map& map, const Shard& shard, const RangeParams& p, bool is_point,
                       const routing::KeyRange& range, bool preview) {
  std::string shown = is_point ? routing::format_key(*range.low) : routing::format_range(range);
  std::string column = range_column(map.kind, map.key_type);
  std::string ctor = range_constructor(map.kind, map.key_type);
  std::string range_expr = ctor + "($3, $4, $5)";
  // Name the mapping in the way, if any, so the operator knows what to change; the exclusion
  // constraint still decides, so a concurrent insert cannot slip past this check.
  auto clash = tx.exec_params(std::string(mapping_select) + "WHERE m.map_id = $1 AND m." + column +
                                  " && " + ctor + "($2, $3, $4) LIMIT 1",
                              map.id, p.low, p.high, p.bounds);
  if (!clash.empty()) {
    Mapping other = mapping_from(clash[0]);
    throw usage_error((is_point ? "point " : "range ") + shown + " overlaps mapping " +
                          range_text_of(other) + " -> " + other.shard + " of map " + map.name,
                      "`shardctl mapping list --map " + map.name + "` shows the mappings");
  }
  if (preview) {
    Mapping m;
    m.map = map.name;
    m.range = range;
    m.is_point = is_point;
    m.shard = shard.name;
    m.status = MappingStatus::online;
    return m;
  }
  auto id = tx.exec_params1("INSERT INTO shardctl.mappings (map_id, shard_id, is_point, " + column +
                                ") VALUES ($1, $2, $6, " + range_expr + ") RETURNING mapping_id",
                            map.id, shard.id, p.low, p.high, p.bounds, is_point)[0]
                .as<std::int64_t>();
  return mapping_from(tx.exec_params1(std::string(mapping_select) + "WHERE m.mapping_id = $1", id));
}

}  // namespace

Mapping Store::add_point(const std::string& map_name, const std::string& key_text, const std::string& shard_name) {
  Map map = get_map(map_name);
  if (map.kind != MapKind::list)
    throw usage_error("map " + map_name + " is a " + std::string(to_text(map.kind)) +
                          " map; --point is for list maps",
                      "use --range LOW..HIGH");
  routing::Key key = routing::parse_key(map.key_type, key_text);
  Shard shard = get_shard(shard_name);
  Mapping out;
  conn_.transact([&](pqxx::work& tx) {
    out = insert_mapping(tx, map, shard, point_params(map.key_type, key), true, routing::KeyRange{key, std::nullopt},
                         previewing());
  });
  return out;
}

Mapping Store::add_range(const std::string& map_name, const std::string& range_text, const std::string& shard_name) {
  Map map = get_map(map_name);
  if (map.kind == MapKind::list)
    throw usage_error("map " + map_name + " is a list map; it takes --point KEY", "use --point KEY");
  routing::KeyRange range = routing::parse_range(bound_type(map.kind, map.key_type), range_text);
  Shard shard = get_shard(shard_name);
  Mapping out;
  conn_.transact([&](pqxx::work& tx) {
    out = insert_mapping(tx, map, shard, range_params(range), false, range, previewing());
  });
  return out;
}

std::vector<Mapping> Store::list_mappings(const std::optional<std::string>& map) {
  if (map) get_map(*map);
  std::vector<Mapping> out;
  conn_.read([&](pqxx::work& tx) {
    auto rows = tx.exec_params(std::string(mapping_select) + "WHERE ($1::text IS NULL OR mp.name = $1)" +
                                   mapping_order,
                               map);
    for (const auto& r : rows) out.push_back(mapping_from(r));
  });
  return out;
}

Mapping Store::remove_mapping(const std::string& map_name, const std::optional<std::string>& point,
                              const std::optional<std::string>& range) {
  Map map = get_map(map_name);
  if (point.has_value() == range.has_value())
    throw usage_error("name the mapping to remove with exactly one of --point KEY or --range LOW..HIGH");
  RangeParams p;
  std::string shown;
  if (point) {
    if (map.kind != MapKind::list) throw usage_error("map " + map_name + " has ranges, not points", "use --range");
    auto key = routing::parse_key(map.key_type, *point);
    p = point_params(map.key_type, key);
    shown = routing::format_key(key);
  } else {
    if (map.kind == MapKind::list) throw usage_error("map " + map_name + " is a list map", "use --point KEY");
    auto r = routing::parse_range(bound_type(map.kind, map.key_type), *range);
    p = range_params(r);
    shown = routing::format_range(r);
  }
  std::string column = range_column(map.kind, map.key_type);
  std::string ctor = range_constructor(map.kind, map.key_type);
  Mapping out;
  conn_.transact([&](pqxx::work& tx) {
    auto found = tx.exec_params(std::string(mapping_select) + "WHERE m.map_id = $1 AND m." + column + " = " +
                                    ctor + "($2, $3, $4) FOR UPDATE OF m",
                                map.id, p.low, p.high, p.bounds);
    if (found.empty())
      throw usage_error("map " + map_name + " has no mapping " + shown,
                        "`shardctl mapping list --map " + map_name + "` shows the exact ranges");
    out = mapping_from(found[0]);
    // A live operation (split, merge, move...) owns its key range until it finishes; taking the
    // mapping away under it would strand rows.
    auto ops = tx.exec_params("SELECT op_id::text, kind, status FROM shardctl.operations "
                              "WHERE map_id = $1 AND " + operation_is_live() + " AND " + column +
                                  " && " + ctor + "($2, $3, $4) LIMIT 1",
                              map.id, p.low, p.high, p.bounds);
    if (!ops.empty()) {
      auto id = ops[0][0].as<std::string>();
      throw locked_error("mapping " + shown + " of map " + map_name + " is in use by operation " + id + " (" +
                             ops[0][1].as<std::string>() + ", " + ops[0][2].as<std::string>() + ")",
                         "wait for it (`shardctl op wait " + id + "`) or cancel it (`shardctl op cancel " + id + "`)");
    }
    if (previewing()) return;
    tx.exec_params("DELETE FROM shardctl.mappings WHERE mapping_id = $1", out.id);
  });
  return out;
}

LoadedMap Store::load_map(const std::string& name) {
  LoadedMap loaded;
  // One snapshot: the version `lookup --format json` reports is the one its answers were read at.
  conn_.read([&](pqxx::work& tx) {
    tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    loaded.map = map_rows.named(tx, name);
    loaded.version = tx.exec_params1("SELECT version FROM shardctl.maps WHERE map_id = $1", loaded.map.id)[0].as<std::int64_t>();
    loaded.shards = shard_rows.all(tx);
    for (const auto& r : tx.exec_params(std::string(mapping_select) + "WHERE mp.name = $1" + mapping_order, name))
      loaded.mappings.push_back(mapping_from(r));
  });
  std::vector<routing::MappingEntry> entries;
  entries.reserve(loaded.mappings.size());
  for (const auto& m : loaded.mappings) {
    routing::MappingEntry e;
    e.range = m.range;
    e.is_point = m.is_point;
    e.online = m.status == MappingStatus::online;
    for (std::size_t i = 0; i < loaded.shards.size(); ++i)
      if (loaded.shards[i].name == m.shard) e.shard_index = static_cast<std::int32_t>(i);
    entries.push_back(std::move(e));
  }
  loaded.router = routing::make_router(loaded.map.kind, loaded.map.key_type, std::move(entries));
  return loaded;
}

}  // namespace shardctl::catalog
