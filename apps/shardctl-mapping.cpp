// shardctl mapping: the points and ranges of a map, each pointing at one shard.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "cli/family.hpp"
#include "output/table.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("mapping", "Add, list and remove the points and ranges of a map");
  std::string map, shard;
  std::optional<std::string> point, range, map_filter;

  auto describe = [&] { return point ? "point " + *point : "range " + *range; };

  auto* add = fam.command("add", "Map a point or a range of keys to a shard", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    if (ctx.dry_run()) {
      // Parse and resolve everything so a dry run fails exactly where the real run would.
      auto m = store.get_map(map);
      store.get_shard(shard);
      if (point) routing::parse_key(m.key_type, *point);
      if (range) routing::parse_range(m.kind == routing::MapKind::hash ? routing::KeyType::int8 : m.key_type, *range);
      ctx.out() << "would map " << describe() << " of map " << map << " to shard " << shard << '\n';
      return;
    }
    auto made = point ? store.add_point(map, *point, shard) : store.add_range(map, *range, shard);
    if (ctx.json()) return ctx.print_json(catalog::to_json(made));
    ctx.out() << "mapped " << (made.is_point ? "point " : "range ") << catalog::mapping_key_text(made) << " of map "
              << made.map << " to shard " << made.shard << '\n';
  });
  add->add_option("--map", map, "Map name")->required()->type_name("MAP");
  auto* add_point = add->add_option("--point", point, "A key of a list map")->type_name("KEY");
  auto* add_range = add->add_option("--range", range, "Half-open range LOW..HIGH (LOW.. and ..HIGH are unbounded)")
                         ->type_name("LOW..HIGH");
  add_point->excludes(add_range);
  add->add_option("--shard", shard, "Shard the keys live on")->required()->type_name("SHARD");
  add->callback([&] {
    if (!point && !range) throw CLI::RequiredError("--point or --range");
  });

  auto* list = fam.command("list", "List mappings", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto mappings = store.list_mappings(map_filter);
    if (ctx.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& m : mappings) arr.push_back(catalog::to_json(m));
      return ctx.print_json({{"mappings", arr}});
    }
    output::TextTable t({"MAP", "KEYS", "SHARD", "STATUS"});
    for (const auto& m : mappings) t.add_row({m.map, catalog::mapping_key_text(m), m.shard, m.status});
    t.print(ctx.out());
  });
  list->add_option("--map", map_filter, "Only this map")->type_name("MAP");

  auto* remove = fam.command("remove", "Remove a mapping (its keys become unmapped)", [&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    if (ctx.dry_run()) {
      store.get_map(map);
      ctx.out() << "would remove " << describe() << " of map " << map << '\n';
      return;
    }
    if (!ctx.confirm("remove " + describe() + " of map " + map + "? its keys become unmapped")) {
      ctx.note("nothing removed");
      return;
    }
    auto gone = store.remove_mapping(map, point, range);
    if (ctx.json()) return ctx.print_json({{"removed", catalog::to_json(gone)}});
    ctx.out() << "removed " << catalog::mapping_key_text(gone) << " -> " << gone.shard << " from map " << map << '\n';
  });
  remove->add_option("--map", map, "Map name")->required()->type_name("MAP");
  auto* rm_point = remove->add_option("--point", point, "The point to remove")->type_name("KEY");
  auto* rm_range = remove->add_option("--range", range, "The exact range to remove")->type_name("LOW..HIGH");
  rm_point->excludes(rm_range);
  remove->callback([&] {
    if (!point && !range) throw CLI::RequiredError("--point or --range");
  });

  return fam.main(argc, argv);
}
