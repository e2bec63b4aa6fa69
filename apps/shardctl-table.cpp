// shardctl table: declare which tables are sharded (and by what key) and which are replicated.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "catalog/names.hpp"
#include "cli/family.hpp"
#include "output/table.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("table", "Declare sharded and reference tables");
  std::string table, map, key;
  bool force = false;

  auto* sharded = fam.command("add-sharded", "Declare a table present on every shard of a map", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto t = store.add_sharded_table(table, map, key);
    if (ctx.json()) return ctx.print_json(catalog::to_json(t));
    ctx.out() << (ctx.dry_run() ? "would declare " : "declared ") << t.name << " sharded by " << catalog::display_ident(*t.key_column) << " on map "
              << *t.map << '\n';
  });
  sharded->add_option("TABLE", table, "Table name ([schema.]table; default schema public)")->required();
  sharded->add_option("--map", map, "The map that routes its rows")->required()->type_name("MAP");
  sharded->add_option("--key", key, "The key column")->required()->type_name("COLUMN");

  auto* reference = fam.command("add-reference", "Declare a small table replicated to every shard", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto t = store.add_reference_table(table);
    if (ctx.json()) return ctx.print_json(catalog::to_json(t));
    ctx.out() << (ctx.dry_run() ? "would declare " : "declared ") << t.name << " a reference table\n";
  });
  reference->add_option("TABLE", table, "Table name ([schema.]table)")->required();

  fam.command("list", "List declared tables", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto tables = store.list_tables();
    if (ctx.json()) return ctx.print_json({{"tables", catalog::to_json(tables)}});
    output::TextTable out({"TABLE", "KIND", "MAP", "KEY"});
    for (const auto& t : tables)
      out.add_row({t.name, std::string(catalog::to_text(t.kind)), t.map.value_or("-"), t.key_column ? catalog::display_ident(*t.key_column) : "-"});
    out.print(ctx.out());
  });

  auto* remove = fam.command("remove", "Forget a table declaration (never touches shard data)", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    store.remove_table(table, force);
    if (ctx.json()) return ctx.print_json({{"removed", catalog::qualify_table(table)}});
    ctx.out() << (ctx.dry_run() ? "would remove" : "removed") << " the declaration of " << catalog::qualify_table(table)
              << '\n';
  });
  remove->add_option("TABLE", table, "Table name")->required();
  remove->add_flag("--force", force, "Also remove xrefs that use it");

  return fam.main(argc, argv);
}
