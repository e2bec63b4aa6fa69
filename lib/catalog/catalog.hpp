// The catalog: the global shard map stored in schema "shardctl" of one PostgreSQL database.
// Store is the only code that reads or writes it; every identifier is quoted and every value
// bound as a parameter.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "pg/connection.hpp"
#include "routing/key.hpp"
#include "routing/router.hpp"

namespace shardctl::catalog {

// The catalog schema version this binary creates and understands.
inline constexpr int schema_version = 12;

struct InitResult {
  int previous_version;  // 0 when the catalog was empty
  int version;
  // Shards whose stored DSN held a password (written before shardctl refused them): init
  // removes it (shardctl(1), CONNECTION STRINGS: the catalog holds none); with a preview, it would.
  std::vector<std::string> passwords_removed{};
  bool changed() const noexcept { return previous_version != version || !passwords_removed.empty(); }
};

// A shard's and a mapping's status (shardctl.shards.status, shardctl.mappings.status). The
// catalog's words are the contract (JSON, text, the columns' CHECKs); code compares the enums.
// Their words only in these tables (core/words.hpp: to_text, read_word<E> of a catalog word, parse_word<E>
// of operator input such as `shard add|set --status`, operator<<).
enum class ShardStatus { online, readonly, offline };
enum class MappingStatus { online, offline };
inline constexpr auto shard_status_words =
    words<ShardStatus>({{ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}})
        .stored_as("shard status", "shardctl.shards");
inline constexpr auto mapping_status_words =
    words<MappingStatus>({{MappingStatus::online, "online"}, {MappingStatus::offline, "offline"}})
        .stored_as("mapping status", "shardctl.mappings");
constexpr const auto& words_of(ShardStatus) noexcept { return shard_status_words; }
constexpr const auto& words_of(MappingStatus) noexcept { return mapping_status_words; }

// What a registered table is (shardctl.tables.kind): sharded tables move with their keys,
// reference tables are copied to every shard.
enum class TableKind { sharded, reference };
inline constexpr auto table_kind_words =
    words<TableKind>({{TableKind::sharded, "sharded"}, {TableKind::reference, "reference"}}).stored_as("table kind", "shardctl.tables");
constexpr const auto& words_of(TableKind) noexcept { return table_kind_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct Shard {
  std::int64_t id = 0;
  std::string name;
  std::string dsn;  // never holds a password
  ShardStatus status = ShardStatus::online;
  // How another shard's server reaches this one to subscribe to it in an online move, when that
  // differs from how shardctl's host does (another host name, port, a replication user); never
  // holds a password: the subscribing server's OS user's ~/.pgpass supplies it.
  std::optional<std::string> replication_dsn{};
  // How applications reach this shard (their PgBouncer, say; man/shardctl-routing.7), when that
  // differs from dsn; never holds a password. shardctl.route() gives it, else dsn.
  std::optional<std::string> app_dsn{};

  // The connection string applications are given: app_dsn, else dsn.
  const std::string& application_dsn() const noexcept { return app_dsn ? *app_dsn : dsn; }

  // The connection string a subscription to this shard uses: replication_dsn, else dsn.
  const std::string& subscription_dsn() const noexcept { return replication_dsn ? *replication_dsn : dsn; }
};

// What `shard set` changes; a field left empty keeps its value.
struct ShardChange {
  std::optional<ShardStatus> status{};
  // A new replication DSN; "" removes it (subscriptions then use the shard's DSN).
  std::optional<std::string> replication_dsn{};
  // A new application DSN; "" removes it (applications are then given the shard's DSN).
  std::optional<std::string> app_dsn{};
};

struct Map {
  std::int64_t id = 0;
  std::string name;
  routing::MapKind kind = routing::MapKind::range;
  routing::KeyType key_type = routing::KeyType::int8;
};

struct Mapping {
  std::int64_t id = 0;
  std::string map;
  routing::KeyRange range;  // for points, range.low is the point
  bool is_point = false;
  std::string shard;
  MappingStatus status = MappingStatus::online;
};

// Table names are "schema.table" in display form (names.hpp: public.orders, "Sales"."Order
// Lines"; catalog::quote_qualified makes SQL of them); column names are raw PostgreSQL names.
struct TableDef {
  std::string name;  // display form, schema-qualified
  TableKind kind = TableKind::sharded;
  std::optional<std::string> map;
  std::optional<std::string> key_column;  // raw
  std::optional<std::string> source;      // reference tables: the shard holding the rows of truth
  std::optional<std::string> source_dsn;  // or a database outside the fleet (no password)
};

// Where a reference table's rows of truth are: a shard, a database outside the fleet, or
// (neither) the majority of the copies.
struct ReferenceSource {
  std::optional<std::string> shard;
  std::optional<std::string> dsn;
};

struct Xref {
  std::string name;
  std::string child_table;                 // display form (add_xref also takes operator syntax)
  std::vector<std::string> child_columns;  // raw
  std::string parent_table;
  std::vector<std::string> parent_columns;  // raw
  std::string route_column;                 // raw
  std::string map;
};

// A map with its mappings and the shard table they index, ready to route keys.
struct LoadedMap {
  Map map;
  std::int64_t version = 0;   // shardctl.maps.version, read in the same snapshot as the rest
  std::vector<Shard> shards;  // MappingEntry::shard_index indexes this
  std::vector<Mapping> mappings;
  std::unique_ptr<routing::Router> router;
};


// How a Store mutation ends. `preview` is --dry-run: the call runs every check the write runs,
// in the same transaction and in the same order, and returns what it would write; only the
// INSERT/UPDATE/DELETE itself is skipped. So a dry run fails exactly where the real run would,
// with the same exit code and message (shardctl(1), GLOBAL OPTIONS).
enum class Writes { apply, preview };
inline Writes writes_for(bool dry_run) noexcept { return dry_run ? Writes::preview : Writes::apply; }

// A new map with the hash ranges it was created with (none for list and range maps).
struct CreatedMap {
  Map map;
  std::vector<Mapping> mappings;
};

// Creates or upgrades the catalog schema (idempotent, safe to run concurrently). Throws a data
// Error when the catalog is newer than this binary. `preview` reports what it would do.
InitResult init_catalog(pg::Connection& conn, Writes writes = Writes::apply);

// `init --grant-routing ROLE`: the statements that let ROLE use the routing contract and nothing
// else of schema shardctl (USAGE on the schema, EXECUTE on exactly routing_functions:
// schema_routing.hpp), ROLE quoted. Runs them unless `preview`; a usage Error (64) when no such
// role exists (in a preview too). Needs the catalog created (init_catalog first).
std::vector<std::string> grant_routing(pg::Connection& conn, const std::string& role, Writes writes = Writes::apply);

class Store {
 public:
  // Checks the catalog exists and has this binary's version (usage Error with the hint
  // "run shardctl init" when absent; data Error when newer).
  explicit Store(pg::Connection& conn, Writes writes = Writes::apply);
  bool previewing() const noexcept { return writes_ == Writes::preview; }

  // Shards. add_shard and set_shard refuse a DSN, replication DSN or application DSN with a
  // password (usage Error); an empty replication or application DSN is none.
  Shard add_shard(const std::string& name, const std::string& dsn, ShardStatus status = ShardStatus::online,
                  const std::optional<std::string>& replication_dsn = std::nullopt,
                  const std::optional<std::string>& app_dsn = std::nullopt);
  std::vector<Shard> list_shards();
  Shard get_shard(const std::string& name);  // usage Error when unknown
  Shard set_shard(const std::string& name, const ShardChange& change);
  void remove_shard(const std::string& name, bool force);  // refuses while mappings use it unless force

  // Maps. `hash_shards` (hash maps only) spreads the hash space evenly over those shards, in
  // the same transaction as the map.
  CreatedMap create_map(const std::string& name, routing::MapKind kind, routing::KeyType key_type,
                        const std::vector<std::string>& hash_shards = {});
  std::vector<Map> list_maps();
  Map get_map(const std::string& name);
  void drop_map(const std::string& name, bool force);  // refuses while mappings/tables/xrefs depend

  // Mappings. Overlaps are refused by the catalog's exclusion constraint (usage Error).
  Mapping add_point(const std::string& map, const std::string& key_text, const std::string& shard);
  Mapping add_range(const std::string& map, const std::string& range_text, const std::string& shard);
  std::vector<Mapping> list_mappings(const std::optional<std::string>& map);
  // Removes the mapping holding `key_text` (points) or exactly `range_text` (ranges).
  // Refused with a locked Error (exit 75) while a live operation covers it.
  Mapping remove_mapping(const std::string& map, const std::optional<std::string>& point,
                         const std::optional<std::string>& range);
  // The map, every shard and the map's mappings, read in one REPEATABLE READ snapshot.
  LoadedMap load_map(const std::string& name);

  // Tables and xrefs. `table` and `key_column` are operator input in SQL syntax
  // (parse_qualified_name, parse_column_name); a table is found by its raw parts, however spelled.
  TableDef add_sharded_table(const std::string& table, const std::string& map, const std::string& key_column);
  // `source`: the shard whose copy the others are compared with and synced from (none: the
  // majority of the copies); a usage Error when no such shard is declared.
  // A usage Error when both are given, or the DSN holds a password.
  TableDef add_reference_table(const std::string& table, const ReferenceSource& source = {});
  // Names (or, with neither, forgets) the source of a declared reference table.
  TableDef set_reference_source(const std::string& table, const ReferenceSource& source);
  std::vector<TableDef> list_tables();
  void remove_table(const std::string& table, bool force);  // refuses while an xref uses it
  Xref add_xref(const Xref& xref);
  std::vector<Xref> list_xrefs();
  void remove_xref(const std::string& name);

 private:
  pg::Connection& conn_;
  Writes writes_;
};

}  // namespace shardctl::catalog

namespace shardctl::catalog {
// The catalog's schema version, 0 when there is no catalog. (Used by init and Store.)
int read_catalog_version(pqxx::work& tx);
// Throws a data Error when `found` is newer than this binary's schema_version.
void refuse_newer(int found);
}  // namespace shardctl::catalog
