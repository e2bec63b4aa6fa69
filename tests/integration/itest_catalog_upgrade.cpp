// `shardctl init` upgrades a catalog of every older schema version to the current one, keeping
// its data (man/shardctl-init.1: "upgrades an older one step by step"). Each older version's
// catalog is loaded as that version's `init` created it: tests/integration/catalog_versions/
// vN.sql holds the DDL of the commit that made version N, taken from git history, and rows in
// every table (catalog_versions/README.md lists the commits, and the one form of version 3 not
// covered yet). Today's schema steps are not used to build them: a step edited after it
// shipped (as step 3 was) would build the old catalog the new way and hide what it lacks.
// For each file: before init, the Store refuses the catalog as older (exit 65, hint `shardctl
// init`: shardctl-init(1)); init with Writes::preview (--dry-run) reports the version and
// writes nothing; init upgrades it from that version to schema_version; the catalog then holds
// exactly the objects a fresh init creates (tables, columns, constraints, indexes, triggers,
// functions, types), every row of every table the old version had, unchanged; the Store reads
// it and writes to it; a second init changes nothing. Every version below schema_version must
// have its vN.sql.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "itest_pg.hpp"
#include "pg/dsn.hpp"

using namespace shardctl;

namespace {

namespace fs = std::filesystem;

struct Fixture {
  int version;
  bool variant;  // vN_WHAT.sql: another form of version N
  fs::path path;
  std::string name() const { return path.filename().string(); }
};

fs::path fixture_dir() {
  const char* src = std::getenv("SHARDCTL_SOURCE_DIR");
  REQUIRE_MESSAGE(src != nullptr, "SHARDCTL_SOURCE_DIR is not set: run through ctest (tests/CMakeLists.txt sets it)");
  auto dir = fs::path(src) / "tests" / "integration" / "catalog_versions";
  REQUIRE_MESSAGE(fs::is_directory(dir), "no fixture directory " << dir.string());
  return dir;
}

// vN.sql and its variants vN_WHAT.sql (another form a version N catalog had), sorted by name.
std::vector<Fixture> fixtures() {
  static const std::regex pattern(R"(v([0-9]+)(_[a-z0-9_]+)?\.sql)");
  std::vector<Fixture> out;
  for (const auto& entry : fs::directory_iterator(fixture_dir())) {
    std::smatch m;
    auto file = entry.path().filename().string();
    if (std::regex_match(file, m, pattern)) out.push_back({std::stoi(m[1].str()), m[2].matched, entry.path()});
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.name() < b.name(); });
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

pg::Connection connect() {
  return pg::Connection(itest::test_dsn(), "catalog");
}

// Every object of schema shardctl as one line each, names and definitions only (no OIDs, no
// column positions: an upgrade appends columns a fresh catalog may have in another order).
constexpr const char* structure_sql = R"SQL(
WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = 'shardctl')
SELECT 'relation ' || c.relname || ' kind ' || c.relkind::text
  FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM ns)
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
       || CASE a.attidentity WHEN 'a' THEN ' identity always' WHEN 'd' THEN ' identity by default' ELSE '' END
       || CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END
       || CASE WHEN a.attcollation NOT IN (0, 100) THEN ' collate ' || a.attcollation::regcollation::text ELSE '' END
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p', 'v', 'm')
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relnamespace = (SELECT oid FROM ns) AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || coalesce(c.relname, '-') || '.' || con.conname || ' ' || pg_get_constraintdef(con.oid)
  FROM pg_constraint con LEFT JOIN pg_class c ON c.oid = con.conrelid
 WHERE con.connamespace = (SELECT oid FROM ns)
UNION ALL
SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'shardctl'
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE c.relnamespace = (SELECT oid FROM ns) AND NOT t.tgisinternal
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid)
  FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)
UNION ALL
SELECT 'type ' || t.typname || ' kind ' || t.typtype::text
       || coalesce(' range of ' || format_type(r.rngsubtype, NULL)
                   || ' collate ' || r.rngcollation::regcollation::text, '')
  FROM pg_type t LEFT JOIN pg_range r ON r.rngtypid = t.oid
 WHERE t.typnamespace = (SELECT oid FROM ns) AND t.typcategory <> 'A'
   AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
)SQL";

std::set<std::string> structure(pg::Connection& conn) {
  std::set<std::string> out;
  conn.read([&](pqxx::work& tx) {
    for (const auto& row : tx.exec(structure_sql)) out.insert(row[0].as<std::string>());
  });
  return out;
}

// Each table's rows (but catalog_version's, which init rewrites) as JSON lines, over the
// columns the table has now: read again after the upgrade with the same columns, they must be
// the same lines.
struct TableRows {
  std::string query;
  std::multiset<std::string> rows;
};

std::multiset<std::string> read_rows(pg::Connection& conn, const std::string& query) {
  std::multiset<std::string> out;
  conn.read([&](pqxx::work& tx) {
    for (const auto& row : tx.exec(query)) out.insert(row[0].as<std::string>());
  });
  return out;
}

std::map<std::string, TableRows> table_rows(pg::Connection& conn) {
  std::map<std::string, TableRows> out;
  conn.read([&](pqxx::work& tx) {
    auto tables = tx.exec(
        "SELECT c.relname, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) "
        "FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "WHERE c.relnamespace = 'shardctl'::regnamespace AND c.relkind = 'r' AND c.relname <> 'catalog_version' "
        "GROUP BY c.relname");
    for (const auto& t : tables) {
      auto name = t[0].as<std::string>();
      out[name].query = "SELECT to_jsonb(x)::text FROM (SELECT " + t[1].as<std::string>() + " FROM shardctl." +
                        tx.quote_name(name) + ") x";
    }
  });
  for (auto& [name, r] : out) r.rows = read_rows(conn, r.query);
  return out;
}

// The version row's version; -1 unless there is exactly one row. (Read outside the lambda's
// transaction: Connection::read turns any exception, a doctest failure too, into an Error.)
int stored_version(pg::Connection& conn) {
  int rows = 0, version = -1;
  conn.read([&](pqxx::work& tx) {
    auto r = tx.exec1("SELECT count(*), coalesce(max(version), -1) FROM shardctl.catalog_version");
    rows = r[0].as<int>();
    version = r[1].as<int>();
  });
  return rows == 1 ? version : -1;
}

bool has_column(pg::Connection& conn, const std::string& table, const std::string& column) {
  bool has = false;
  conn.read([&](pqxx::work& tx) {
    has = tx.exec_params1("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('shardctl.' || $1) "
                          "AND attname = $2 AND NOT attisdropped",
                          table, column)[0]
              .as<int>() == 1;
  });
  return has;
}

std::map<std::string, long> map_versions(pg::Connection& conn) {
  std::map<std::string, long> out;
  conn.read([&](pqxx::work& tx) {
    for (const auto& row : tx.exec("SELECT name, version FROM shardctl.maps"))
      out[row[0].as<std::string>()] = row[1].as<long>();
  });
  return out;
}

void drop_catalog(pg::Connection& conn) {
  conn.transact([](pqxx::work& tx) { tx.exec("DROP SCHEMA IF EXISTS shardctl CASCADE"); });
}

// Lines one set has and the other lacks, for a failure message.
template <class Set>
std::string difference(const Set& want, const Set& got) {
  std::vector<std::string> lacks, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(lacks));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::string out;
  for (const auto& line : lacks) out += "\n  lacks: " + line;
  for (const auto& line : extra) out += "\n  extra: " + line;
  return out;
}

void upgrade_one(pg::Connection& conn, const Fixture& fx, const std::set<std::string>& fresh) {
  const auto name = fx.name();
  drop_catalog(conn);
  auto sql = read_file(fx.path);
  conn.transact([&](pqxx::work& tx) { tx.exec(sql); });
  REQUIRE_MESSAGE(stored_version(conn) == fx.version, name << ": the file's catalog_version row is not " << fx.version);
  auto old_structure = structure(conn);
  auto before = table_rows(conn);
  const bool had_map_versions = has_column(conn, "maps", "version");
  for (const auto& [table, r] : before)
    CHECK_MESSAGE(!r.rows.empty(), name << ": the fixture leaves table " << table << " empty");

  // An older catalog is refused by every command but init, with init as the hint.
  try {
    catalog::Store store(conn);
    FAIL_CHECK(name << ": the Store accepted a version " << fx.version << " catalog");
  } catch (const Error& e) {
    CHECK_MESSAGE(e.kind() == ErrorKind::data, name << ": " << e.what());
    CHECK_MESSAGE(exit_code_for(e.kind()) == 65, name);
    CHECK_MESSAGE(std::string(e.what()).find("schema version " + std::to_string(fx.version) + ", older than") !=
                      std::string::npos,
                  name << ": " << e.what());
    CHECK_MESSAGE(e.hint().find("shardctl init") != std::string::npos, name << ": hint " << e.hint());
  }

  // --dry-run: the real run's reading, no write.
  auto preview = catalog::init_catalog(conn, catalog::Writes::preview);
  CHECK_MESSAGE(preview.previous_version == fx.version, name);
  CHECK_MESSAGE(preview.version == catalog::schema_version, name);
  CHECK_MESSAGE(stored_version(conn) == fx.version, name << ": init --dry-run changed the version");
  CHECK_MESSAGE(structure(conn) == old_structure, name << ": init --dry-run changed the schema");

  auto result = catalog::init_catalog(conn);
  CHECK_MESSAGE(result.previous_version == fx.version, name);
  CHECK_MESSAGE(result.version == catalog::schema_version, name);
  CHECK_MESSAGE(result.changed(), name);
  CHECK_MESSAGE(result.passwords_removed.empty(), name);
  CHECK_MESSAGE(stored_version(conn) == catalog::schema_version, name);

  auto upgraded = structure(conn);
  CHECK_MESSAGE(upgraded == fresh,
                name << ": the upgraded catalog differs from a fresh one:" << difference(fresh, upgraded));

  for (const auto& [table, r] : before) {
    auto now = read_rows(conn, r.query);
    CHECK_MESSAGE(now == r.rows, name << ": rows of shardctl." << table
                                      << " changed (lacks: as loaded, extra: after init):" << difference(r.rows, now));
  }

  // The Store reads the upgraded catalog and writes to it.
  catalog::Store store(conn);
  std::vector<std::string> shards;
  for (const auto& s : store.list_shards()) shards.push_back(s.name + ":" + std::string(catalog::to_text(s.status)));
  const std::vector<std::string> want_shards = {"a:online", "b:readonly", "c:offline"};
  CHECK_MESSAGE(shards == want_shards, name);
  auto maps = store.list_maps();
  CHECK_MESSAGE(maps.size() == 5, name);
  for (const auto& m : maps) {
    auto loaded = store.load_map(m.name);
    CHECK_MESSAGE(!loaded.mappings.empty(), name << ": map " << m.name << " has no mappings");
  }
  CHECK_MESSAGE(store.list_mappings(std::nullopt).size() == 9, name);
  CHECK_MESSAGE(store.list_tables().size() == (fx.version >= 11 ? 4u : 3u), name);
  CHECK_MESSAGE(store.list_xrefs().size() == 1, name);
  // A map's version counts changes to its mappings (step 6): maps older than the column start
  // at 1, and the trigger counts a point added after the upgrade.
  auto versions = map_versions(conn);
  if (!had_map_versions)
    for (const auto& [map, v] : versions)
      CHECK_MESSAGE(v == 1, name << ": map " << map << " upgraded to version " << v);
  // Step 12's change log starts at the upgrade: no change since each map's version, and an
  // older version asks for a reload; route() answers from the upgraded rows.
  conn.read([&](pqxx::work& tx) {
    for (const auto& [map, v] : versions) {
      auto since_now = tx.exec_params1("SELECT count(*) FROM shardctl.map_changes($1, $2)", map, v)[0].as<long>();
      CHECK_MESSAGE(since_now == 0, name << ": map " << map << " has changes since its own version");
      auto before = tx.exec_params1("SELECT string_agg(change, ',') FROM shardctl.map_changes($1, $2)", map, v - 1)[0];
      CHECK_MESSAGE(before.c_str() == std::string("reload"), name << ": map " << map << " answers changes from before the upgrade");
    }
    CHECK_MESSAGE(tx.exec1("SELECT shard FROM shardctl.route('users', 42)")[0].c_str() == std::string("a"), name);
  });
  for (const auto& s : store.list_shards())
    CHECK_MESSAGE(s.replication_dsn.has_value() == (fx.version >= 10 && s.name == "a"),
                  name << ": shard " << s.name << "'s replication DSN changed in the upgrade");
  // Step 11's columns: no reference table had a source; a shard and a DSN are stored, read back
  // and forgotten.
  for (const auto& t : store.list_tables()) {
    if (fx.version < 11)
      CHECK_MESSAGE((!t.source && !t.source_dsn), name << ": table " << t.name << " upgraded with a source");
    else if (t.name == "public.countries")
      CHECK_MESSAGE(t.source == "a", name << ": " << t.name << "'s source lost in the upgrade");
    else if (t.name == "public.currencies")
      CHECK_MESSAGE(t.source_dsn.has_value(), name << ": " << t.name << "'s source DSN lost in the upgrade");
    if (t.kind != catalog::TableKind::reference) continue;
    CHECK_MESSAGE(store.set_reference_source(t.name, {std::string("a"), std::nullopt}).source == "a", name);
    for (const auto& again : store.list_tables())
      if (again.name == t.name) CHECK_MESSAGE(again.source == "a", name << ": " << t.name << "'s source not stored");
    store.set_reference_source(t.name, {std::nullopt, std::string("host=ref.internal dbname=truth")});
    for (const auto& again : store.list_tables())
      if (again.name == t.name)
        CHECK_MESSAGE((!again.source && again.source_dsn == pg::redact_dsn("host=ref.internal dbname=truth")), name << ": " << t.name);
    store.set_reference_source(t.name, {});
  }
  auto added = store.add_shard("d", "host=/run/postgresql port=5432 dbname=shard_d");
  CHECK_MESSAGE(added.id > 0, name);
  // Step 10's column: a replication DSN is stored, read back, and removed.
  catalog::ShardChange replication;
  replication.replication_dsn = "host=replica.internal port=5433 dbname=shard_d";
  store.set_shard("d", replication);
  CHECK_MESSAGE(store.get_shard("d").replication_dsn == pg::redact_dsn(*replication.replication_dsn), name);
  replication.replication_dsn = "";
  store.set_shard("d", replication);
  CHECK_MESSAGE(!store.get_shard("d").replication_dsn, name);
  store.add_point("tenants", "initech", "d");
  auto want_versions = versions;
  want_versions["tenants"] += 1;
  CHECK_MESSAGE(map_versions(conn) == want_versions, name << ": adding a point to map tenants did not count once");

  auto again = catalog::init_catalog(conn);
  CHECK_MESSAGE(!again.changed(), name << ": a second init changed the catalog");
  CHECK_MESSAGE(again.previous_version == catalog::schema_version, name);
}

}  // namespace

TEST_CASE("every schema version older than the current one has a fixture") {
  std::set<int> have;
  for (const auto& fx : fixtures()) {
    CHECK_MESSAGE(fx.version >= 1, fx.name());
    CHECK_MESSAGE(fx.version < catalog::schema_version,
                  fx.name() << " is not older than version " << catalog::schema_version);
    if (!fx.variant) have.insert(fx.version);
  }
  for (int v = 1; v < catalog::schema_version; ++v)
    CHECK_MESSAGE(have.count(v) == 1, "no catalog_versions/v" << v << ".sql: add the catalog version " << v
                                                              << " made (catalog_versions/README.md)");
}

TEST_CASE("init upgrades a catalog of every older version to the current one with its data") {
  auto conn = connect();
  drop_catalog(conn);
  REQUIRE(catalog::init_catalog(conn).previous_version == 0);
  const auto fresh = structure(conn);
  // The objects compared are there at all (a query that read nothing would compare equal).
  REQUIRE(fresh.count("column op_batches.keys bigint") == 1);
  REQUIRE(fresh.count("relation rebalance_steps kind r") == 1);

  auto all = fixtures();
  REQUIRE(all.size() >= static_cast<std::size_t>(catalog::schema_version - 1));
  for (const auto& fx : all) {
    INFO("fixture " << fx.name());
    try {
      upgrade_one(conn, fx, fresh);
    } catch (const std::exception& e) {
      FAIL_CHECK(fx.name() << ": " << e.what());
    }
  }
}
