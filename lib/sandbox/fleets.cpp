// Fleets on the sandbox's clusters: made from scratch (the demo fleet of `up`), or cloned from
// template databases (`sandbox fleet`, which the test suite calls for every test and every
// crash point: cloning a database is far cheaper than creating the catalog schema and loading
// the sample data again).
#include <optional>
#include <string>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "pg/connection.hpp"
#include "prepare/prepare.hpp"
#include "sandbox/sample_data.hpp"
#include "sandbox/sandbox.hpp"
#include "sandbox/state.hpp"

namespace shardctl::sandbox {
using nlohmann::json;

namespace {

// Bumped whenever what a fleet holds changes in a way the catalog version does not show (the
// sample data), so that a sandbox running across an upgrade never clones a stale template.
constexpr int template_format = 2;  // 2: shards prepared (shard-side objects installed)

void require_fleet_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 30 && name[0] >= 'a' && name[0] <= 'z';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok) throw usage_error("invalid fleet name '" + name + "'", "use [a-z][a-z0-9_]*, at most 30 characters");
}

// The databases of a fleet named `prefix`; shard i lives on cluster shards1 or shards2 in turn.
std::string catalog_db(const std::string& prefix) { return prefix + "_catalog"; }
std::string shard_db(const std::string& prefix, int i) { return prefix + "_shard_" + std::to_string(i); }
std::size_t shard_cluster(int i) { return 1 + static_cast<std::size_t>((i - 1) % 2); }

// One template per set of fleet options. The '-' keeps template names apart from every fleet
// name ([a-z][a-z0-9_]*).
std::string template_prefix(const FleetOptions& o) {
  return "shardctl-template-f" + std::to_string(template_format) + "c" + std::to_string(catalog::schema_version) +
         "-s" + std::to_string(o.shards) + (o.empty ? std::string("-empty") : "-x" + std::to_string(o.scale));
}

void provision_sample(pg::Connection& cat, const Fleet& fleet, int scale) {
  // Customers 1..N split into contiguous ranges, one per shard; the first and last ranges are
  // unbounded so the whole key space is mapped.
  const std::int64_t customers = 1000LL * scale;
  const auto n = static_cast<std::int64_t>(fleet.shards.size());
  catalog::Store store(cat);
  auto map = store.create_map("customers", routing::MapKind::range, routing::KeyType::int8).map;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t first = 1 + i * customers / n, next = 1 + (i + 1) * customers / n;
    const auto& [shard_name, shard_dsn] = fleet.shards[static_cast<std::size_t>(i)];
    store.add_shard(shard_name, shard_dsn);
    std::string range = (i == 0 ? "" : std::to_string(first)) + ".." + (i == n - 1 ? "" : std::to_string(next));
    store.add_range(map.name, range, shard_name);
    pg::Connection shard(shard_dsn, "shard " + shard_name);
    load_sample_shard(shard, first, next - 1);
    // As `shard add` does for a shard that answers: shardctl's shard-side objects
    // (man/shardctl-shard.1, PREPARE), so every sandbox shard has them.
    prepare::prepare_shard(shard_dsn, "shard " + shard_name, false);
  }
  store.add_reference_table("public.region");
  store.add_reference_table("public.product");
  for (const char* t : {"public.customers", "public.orders", "public.order_lines"})
    store.add_sharded_table(t, map.name, "customer_id");
  catalog::Xref x;
  x.name = "order_lines_order";
  x.child_table = "public.order_lines";
  x.child_columns = {"customer_id", "order_id"};
  x.parent_table = "public.orders";
  x.parent_columns = {"customer_id", "order_id"};
  x.route_column = "customer_id";
  x.map = map.name;
  store.add_xref(x);
}

}  // namespace

Fleet Sandbox::make_fleet(const std::string& prefix, const FleetOptions& options) const {
  auto clusters = status();
  Fleet fleet;
  fleet.name = prefix;
  auto create_db = [&](const Cluster& c, const std::string& db) {
    pg::Connection conn(dsn(c, "postgres"), "sandbox cluster " + c.name);
    pqxx::nontransaction tx(conn.raw());
    tx.exec("CREATE DATABASE " + tx.quote_name(db));
    return dsn(c, db);
  };
  fleet.catalog_dsn = create_db(clusters[0], catalog_db(prefix));
  for (int i = 1; i <= options.shards; ++i)
    fleet.shards.emplace_back("shard_" + std::to_string(i), create_db(clusters[shard_cluster(i)], shard_db(prefix, i)));
  pg::Connection cat(fleet.catalog_dsn, "catalog");
  catalog::init_catalog(cat);
  if (!options.empty) provision_sample(cat, fleet, options.scale);
  return fleet;
}

// Builds the template databases for `options` unless a complete set exists. Called under the
// state lock, so one process builds while the others wait, and nobody clones a half-built set.
void Sandbox::ensure_template(const FleetOptions& options) {
  auto clusters = status();
  const std::string prefix = template_prefix(options);
  const std::string admin = dsn(clusters[0], "postgres");
  {
    pg::Connection conn(admin, "sandbox cluster catalog");
    pqxx::nontransaction tx(conn.raw());
    // Connections to the catalog template are switched off last, when the whole set is built:
    // that marks it complete.
    auto r = tx.exec_params("SELECT datallowconn FROM pg_database WHERE datname = $1", catalog_db(prefix));
    if (!r.empty() && !r[0][0].as<bool>()) return;
  }
  // An interrupted build leaves some databases behind: start over.
  auto drop = [](pqxx::nontransaction& tx, const std::string& db) {
    tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(db) + " WITH (FORCE)");
  };
  {
    pg::Connection conn(admin, "sandbox cluster catalog");
    pqxx::nontransaction tx(conn.raw());
    drop(tx, catalog_db(prefix));
  }
  for (std::size_t c = 1; c <= 2; ++c) {
    pg::Connection conn(dsn(clusters[c], "postgres"), "sandbox cluster " + clusters[c].name);
    pqxx::nontransaction tx(conn.raw());
    for (int i = 1; i <= options.shards; ++i)
      if (shard_cluster(i) == c) drop(tx, shard_db(prefix, i));
  }
  make_fleet(prefix, options);
  // CREATE DATABASE ... TEMPLATE needs the template to itself: no connections from now on.
  auto freeze = [](const std::string& cluster_dsn, const std::string& db) {
    pg::Connection conn(cluster_dsn, "sandbox cluster");
    pqxx::nontransaction tx(conn.raw());
    tx.exec("ALTER DATABASE " + tx.quote_name(db) + " WITH ALLOW_CONNECTIONS false");
  };
  for (int i = 1; i <= options.shards; ++i) freeze(dsn(clusters[shard_cluster(i)], "postgres"), shard_db(prefix, i));
  freeze(admin, catalog_db(prefix));
}

Fleet Sandbox::clone_template(const std::string& name, const FleetOptions& options) const {
  auto clusters = status();
  const std::string prefix = template_prefix(options);
  auto clone = [&](const Cluster& c, const std::string& db, const std::string& from) {
    pg::Connection conn(dsn(c, "postgres"), "sandbox cluster " + c.name);
    pqxx::nontransaction tx(conn.raw());
    tx.exec("CREATE DATABASE " + tx.quote_name(db) + " TEMPLATE " + tx.quote_name(from));
    return dsn(c, db);
  };
  Fleet fleet;
  fleet.name = name;
  fleet.catalog_dsn = clone(clusters[0], catalog_db(name), catalog_db(prefix));
  for (int i = 1; i <= options.shards; ++i) {
    const Cluster& c = clusters[shard_cluster(i)];
    fleet.shards.emplace_back("shard_" + std::to_string(i), clone(c, shard_db(name, i), shard_db(prefix, i)));
  }
  if (!options.empty) {
    // The cloned catalog still names the template's shard databases. (The catalog Store has no
    // DSN update: no command changes a registered shard's DSN; only this clone needs one.)
    pg::Connection cat(fleet.catalog_dsn, "catalog");
    cat.transact([&](pqxx::work& tx) {
      for (const auto& [shard, shard_dsn] : fleet.shards) {
        auto r = tx.exec_params("UPDATE shardctl.shards SET dsn = $1 WHERE name = $2", shard_dsn, shard);
        if (r.affected_rows() != 1)
          throw internal_error("template catalog " + catalog_db(prefix) + " has no shard " + shard);
      }
    });
  }
  return fleet;
}

Fleet Sandbox::create_fleet(const std::string& name, const FleetOptions& options) {
  require_fleet_name(name);
  if (options.shards < 1 || options.shards > 64) throw usage_error("--shards must be from 1 to 64");
  if (options.scale < 0) throw usage_error("--scale must be 0 or more");
  if (!exists()) throw usage_error("no sandbox in " + dir_.string(), "run `shardctl sandbox up` first");
  StateLock lock(dir_);
  json state = read_state(dir_);
  for (const auto& f : state["fleets"])
    if (f.at("name") == name) throw usage_error("fleet " + name + " already exists in " + dir_.string());
  for (const auto& c : status())
    if (!c.running) throw unavailable_error("sandbox cluster " + c.name + " is not running", "run `shardctl sandbox up`");

  Fleet fleet;
  if (options.preview) {
    fleet.name = name;
    return fleet;
  }
  if (options.from_template) {
    ensure_template(options);
    fleet = clone_template(name, options);
  } else {
    fleet = make_fleet(name, options);
  }
  state["fleets"].push_back(fleet_to(fleet));
  write_state(dir_, state);
  return fleet;
}

}  // namespace shardctl::sandbox
