// shardctl table: declare which tables are sharded (and by what key) and which are replicated.
#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "catalog/json.hpp"
#include "catalog/names.hpp"
#include "cli/family.hpp"
#include "output/table.hpp"
#include "pg/dsn.hpp"
#include "refdata/render.hpp"
#include "refdata/sync.hpp"

using namespace shardctl;

namespace {

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string table, map, key;
  std::optional<std::string> source, source_dsn, from, only_table;
  bool force = false, no_source = false, allow_no_pk = false;
  std::optional<int> parallel;

  void add_sharded(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto t = store.add_sharded_table(table, map, key);
    if (ctx.json()) return ctx.print_json(catalog::to_json(t));
    ctx.out() << (ctx.dry_run() ? "would declare " : "declared ") << t.name << " sharded by " << catalog::display_ident(*t.key_column) << " on map "
              << *t.map << '\n';
  }

  void add_reference(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto t = store.add_reference_table(table, {source, source_dsn});
    if (ctx.json()) return ctx.print_json(catalog::to_json(t));
    ctx.out() << (ctx.dry_run() ? "would declare " : "declared ") << t.name << " a reference table"
              << (t.source ? ", its rows of truth on " + *t.source : "")
              << (t.source_dsn ? ", its rows of truth in " + pg::describe_dsn(*t.source_dsn) : "") << '\n';
  }

  void set(cli::Context& ctx) {
    if ((source.has_value() || source_dsn.has_value()) == no_source)
      throw usage_error("give --source SHARD, --source-dsn DSN or --no-source");
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto t = store.set_reference_source(table, {source, source_dsn});
    if (ctx.json()) return ctx.print_json(catalog::to_json(t));
    ctx.out() << (ctx.dry_run() ? "would set " : "set ") << t.name << "'s source of truth to "
              << (t.source       ? *t.source
                  : t.source_dsn ? pg::describe_dsn(*t.source_dsn)
                                 : std::string("the majority of its copies"))
              << '\n';
  }

  void sync_reference(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    std::vector<refdata::RefTable> tables;
    auto declared = store.list_tables();
    std::string wanted = only_table ? catalog::display_name(catalog::parse_qualified_name(*only_table)) : "";
    for (const auto& t : declared)
      if (t.kind == catalog::TableKind::reference && (wanted.empty() || t.name == wanted))
        tables.push_back({t.name, catalog::quote_qualified(t.name), t.source, t.source_dsn});
    if (only_table && tables.empty())
      throw usage_error("no reference table " + wanted + " is declared", "`shardctl table list` shows the declared tables");
    std::vector<refdata::ShardRef> shards;
    for (const auto& s : store.list_shards())
      if (s.status != catalog::ShardStatus::offline) shards.push_back({s.name, s.dsn});
    refdata::SyncOptions opt;
    opt.from = from;
    opt.dry_run = ctx.dry_run();
    opt.allow_no_pk = allow_no_pk;
    opt.parallel = ctx.parallel(parallel);
    auto report = refdata::sync_references(shards, tables, opt);
    if (ctx.json()) ctx.print_json(refdata::sync_to_json(report));
    else refdata::print_sync_text(ctx.out(), report, static_cast<int>(ctx.config().check.sample));
    exit_for(report);
  }

  // A shard that could not be reached exits 69, a refused one 64 (man/shardctl-table.1, EXIT STATUS).
  static void exit_for(const refdata::SyncReport& report) {
    std::string down, refused;
    for (const auto& s : report.shards) {
      if (!s.unreachable.empty()) down += (down.empty() ? "" : ", ") + s.shard;
      if (!s.refused.empty()) refused += (refused.empty() ? "" : "; ") + s.shard + ": " + s.refused;
    }
    if (!down.empty())
      throw unavailable_error("could not sync the reference tables on " + down + "; the other shards were synced",
                              "run it again once the shard is back");
    if (!refused.empty()) throw usage_error("refused on " + refused);
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto tables = store.list_tables();
    if (ctx.json()) return ctx.print_json({{"tables", catalog::to_json(tables)}});
    output::TextTable out({"TABLE", "KIND", "MAP", "KEY", "SOURCE"});
    for (const auto& t : tables)
      out.add_row({t.name, std::string(catalog::to_text(t.kind)), t.map.value_or("-"), t.key_column ? catalog::display_ident(*t.key_column) : "-",
                   t.kind != catalog::TableKind::reference ? "-"
                   : t.source_dsn                          ? pg::describe_dsn(*t.source_dsn)
                                                           : t.source.value_or("majority")});
    out.print(ctx.out());
  }

  void remove(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    store.remove_table(table, force);
    if (ctx.json()) return ctx.print_json({{"removed", catalog::qualify_table(table)}});
    ctx.out() << (ctx.dry_run() ? "would remove" : "removed") << " the declaration of " << catalog::qualify_table(table)
              << '\n';
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("table", "Declare sharded and reference tables");
  Commands c;

  auto* sharded = fam.command("add-sharded", "Declare a table present on every shard of a map",
                              [&](cli::Context& ctx) { c.add_sharded(ctx); });
  sharded->add_option("TABLE", c.table, "Table name ([schema.]table; default schema public)")->required();
  sharded->add_option("--map", c.map, "The map that routes its rows")->required()->type_name("MAP");
  sharded->add_option("--key", c.key, "The key column")->required()->type_name("COLUMN");

  auto* reference = fam.command("add-reference", "Declare a small table replicated to every shard",
                                [&](cli::Context& ctx) { c.add_reference(ctx); });
  reference->add_option("TABLE", c.table, "Table name ([schema.]table)")->required();
  reference->add_option("--source", c.source, "The shard whose copy is the source of truth (default: the majority of the copies)")
      ->type_name("SHARD");
  reference->add_option("--source-dsn", c.source_dsn, "A database outside the fleet whose copy is the source of truth")
      ->type_name("DSN");

  auto* set = fam.command("set", "Change a reference table's source of truth", [&](cli::Context& ctx) { c.set(ctx); });
  set->add_option("TABLE", c.table, "A reference table")->required();
  set->add_option("--source", c.source, "The shard whose copy is the source of truth")->type_name("SHARD");
  set->add_option("--source-dsn", c.source_dsn, "A database outside the fleet whose copy is the source of truth")
      ->type_name("DSN");
  set->add_flag("--no-source", c.no_source, "Forget the named source: the majority of the copies is the source");

  auto* sync = fam.command("sync-reference", "Make every shard's copy of reference tables identical to the source's",
                           [&](cli::Context& ctx) { c.sync_reference(ctx); });
  sync->add_option("TABLE", c.only_table, "Only this reference table (default: every reference table, in foreign-key order)");
  sync->add_option("--from", c.from, "Copy from this shard (default: each table's source, else the majority of its copies)")
      ->type_name("SHARD");
  sync->add_flag("--allow-no-pk", c.allow_no_pk, "Replace a differing table without a primary key whole, in one transaction");
  sync->add_option("--parallel", c.parallel, "Shards synced at once (default: [defaults] parallel)")
      ->check(cli::whole_number(1))
      ->type_name("N");

  fam.command("list", "List declared tables", [&](cli::Context& ctx) { c.list(ctx); });

  auto* remove = fam.command("remove", "Forget a table declaration (never touches shard data)",
                             [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("TABLE", c.table, "Table name")->required();
  remove->add_flag("--force", c.force, "Also remove xrefs that use it");

  return fam.main(argc, argv);
}
