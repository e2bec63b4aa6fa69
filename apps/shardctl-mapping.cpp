// shardctl mapping: the points and ranges of a map, each pointing at one shard.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "cli/family.hpp"
#include "confirmed_change.hpp"
#include "output/table.hpp"

using namespace shardctl;

namespace {

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string map, shard;
  std::optional<std::string> point, range, map_filter;

  void add(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto made = point ? store.add_point(map, *point, shard) : store.add_range(map, *range, shard);
    if (ctx.json()) {
      auto doc = catalog::to_json(made);
      return ctx.print_json(doc);
    }
    ctx.out() << (ctx.dry_run() ? "would map " : "mapped ") << (made.is_point ? "point " : "range ") << catalog::mapping_key_text(made) << " of map "
              << made.map << " to shard " << made.shard << '\n';
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto mappings = store.list_mappings(map_filter);
    if (ctx.json()) return ctx.print_json({{"mappings", catalog::to_json(mappings)}});
    output::TextTable t({"MAP", "KEYS", "SHARD", "STATUS"});
    for (const auto& m : mappings) t.add_row({m.map, catalog::mapping_key_text(m), m.shard, std::string(catalog::to_text(m.status))});
    t.print(ctx.out());
  }

  void remove(cli::Context& ctx) {
    catalog::Mapping gone;
    auto mapping = [&] { return catalog::mapping_key_text(gone) + " -> " + gone.shard; };
    apps::confirmed_change(
        ctx, "removed", [&](catalog::Store& store) { gone = store.remove_mapping(map, point, range); },
        [&] { return "remove " + mapping() + " of map " + map + "? its keys become unmapped"; },
        [&](bool would) {
          return apps::Told{catalog::to_json(gone), (would ? "would remove " : "removed ") + mapping() + " from map " + map};
        });
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("mapping", "Add, list and remove the points and ranges of a map");
  Commands c;


  auto* add = fam.command("add", "Map a point or a range of keys to a shard", [&](cli::Context& ctx) { c.add(ctx); });
  add->add_option("--map", c.map, "Map name")->required()->type_name("MAP");
  auto* add_point = add->add_option("--point", c.point, "A key of a list map")->type_name("KEY");
  auto* add_range = add->add_option("--range", c.range, "Half-open range LOW..HIGH (LOW.. and ..HIGH are unbounded)")
                         ->type_name("LOW..HIGH");
  add_point->excludes(add_range);
  add->add_option("--shard", c.shard, "Shard the keys live on")->required()->type_name("SHARD");
  add->callback([&] {
    if (!c.point && !c.range) throw cli::RequiredError("--point or --range");
  });

  auto* list = fam.command("list", "List mappings", [&](cli::Context& ctx) { c.list(ctx); });
  list->add_option("--map", c.map_filter, "Only this map")->type_name("MAP");

  auto* remove = fam.command("remove", "Remove a mapping (its keys become unmapped)", [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("--map", c.map, "Map name")->required()->type_name("MAP");
  auto* rm_point = remove->add_option("--point", c.point, "The point to remove")->type_name("KEY");
  auto* rm_range = remove->add_option("--range", c.range, "The exact range to remove")->type_name("LOW..HIGH");
  rm_point->excludes(rm_range);
  remove->callback([&] {
    if (!c.point && !c.range) throw cli::RequiredError("--point or --range");
  });

  return fam.main(argc, argv);
}
