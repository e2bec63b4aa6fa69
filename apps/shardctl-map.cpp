// shardctl map: create, list, inspect and drop shard maps.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "cli/family.hpp"
#include "confirmed_change.hpp"
#include "output/table.hpp"

using namespace shardctl;

namespace {

// What the commands were given; each command reads the options it defined.
struct Args {
  std::string name, kind, key_type;
  std::vector<std::string> shards;
  bool force = false;
};

void create_map(cli::Context& ctx, const Args& a) {
  const auto& [name, kind, key_type, shards, force] = a;
  catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
  auto made = store.create_map(name, parse_word<routing::MapKind>(kind), routing::parse_key_type(key_type), shards);
  if (ctx.json()) {
    auto doc = catalog::to_json(made.map);
    doc["mappings"] = nlohmann::json::array();
    for (const auto& m : made.mappings) doc["mappings"].push_back(catalog::to_json(m));
    return ctx.print_json(doc);
  }
  if (ctx.dry_run()) {
    ctx.out() << "would create " << kind << " map " << name << " with " << key_type << " keys\n";
    for (const auto& m : made.mappings)
      ctx.out() << "would map hash range " << catalog::mapping_key_text(m) << " to " << m.shard << '\n';
    return;
  }
  ctx.out() << "created " << kind << " map " << name << " (" << key_type << " keys)";
  if (!made.mappings.empty()) ctx.out() << " with " << made.mappings.size() << " hash ranges";
  ctx.out() << '\n';
}

void list_maps(cli::Context& ctx) {
  catalog::Store store(ctx.catalog());
  auto maps = store.list_maps();
  auto mappings = store.list_mappings(std::nullopt);
  auto count = [&](const std::string& m) {
    return std::count_if(mappings.begin(), mappings.end(), [&](const auto& x) { return x.map == m; });
  };
  if (ctx.json()) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : maps) {
      auto j = catalog::to_json(m);
      j["mappings"] = count(m.name);
      arr.push_back(j);
    }
    return ctx.print_json({{"maps", arr}});
  }
  output::TextTable t({"NAME", "KIND", "KEY TYPE", "MAPPINGS"});
  for (const auto& m : maps)
    t.add_row({m.name, std::string(to_text(m.kind)), std::string(to_text(m.key_type)),
               std::to_string(count(m.name))});
  t.print(ctx.out());
}

void show_map(cli::Context& ctx, const std::string& name) {
  catalog::Store store(ctx.catalog());
  auto map = store.get_map(name);
  auto mappings = store.list_mappings(name);
  std::vector<catalog::TableDef> tables;
  for (auto& t : store.list_tables())
    if (t.map == name) tables.push_back(std::move(t));
  if (ctx.json()) {
    auto doc = catalog::to_json(map);
    doc["mappings"] = nlohmann::json::array();
    for (const auto& m : mappings) doc["mappings"].push_back(catalog::to_json(m));
    doc["tables"] = nlohmann::json::array();
    for (const auto& t : tables) doc["tables"].push_back(catalog::to_json(t));
    return ctx.print_json(doc);
  }
  ctx.out() << "map:      " << map.name << "\nkind:     " << to_text(map.kind)
            << "\nkey type: " << to_text(map.key_type) << "\n\n";
  output::TextTable t({map.kind == routing::MapKind::list ? "POINT" : "RANGE", "SHARD", "STATUS"});
  for (const auto& m : mappings) t.add_row({catalog::mapping_key_text(m), m.shard, std::string(catalog::to_text(m.status))});
  t.print(ctx.out());
  if (!tables.empty()) {
    ctx.out() << "\nsharded tables:\n";
    for (const auto& tb : tables) ctx.out() << "  " << tb.name << " (key " << catalog::display_ident(*tb.key_column) << ")\n";
  }
}

void drop_map(cli::Context& ctx, const std::string& name, bool force) {
  apps::confirmed_change(
      ctx, "dropped", [&](catalog::Store& store) { store.drop_map(name, force); },
      [&] { return "drop map " + name + " from the catalog?"; },
      [&](bool would) {
        return apps::Told{name, would ? "would drop map " + name + (force ? " with its mappings, tables and xrefs" : "")
                                      : "dropped map " + name};
      });
}

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("map", "Create, list, inspect and drop shard maps");
  Args a;
  auto* create = fam.command("create", "Create a shard map", [&](cli::Context& ctx) { create_map(ctx, a); });
  create->add_option("NAME", a.name, "Map name")->required();
  create->add_option("--kind", a.kind, "Routing kind")
      ->required()
      ->check(cli::IsMember({"list", "range", "hash"}))
      ->type_name("list|range|hash");
  create->add_option("--key-type", a.key_type, "Key type")
      ->required()
      ->check(cli::IsMember({"int", "bigint", "text", "uuid"}))
      ->type_name("int|bigint|text|uuid");
  create->add_option("--shards", a.shards, "Hash maps: spread the hash space evenly over these shards")
      ->delimiter(',')
      ->type_name("S1,S2,...");
  fam.command("list", "List the shard maps", list_maps);
  fam.command("show", "Show a map with its mappings and tables", [&](cli::Context& ctx) { show_map(ctx, a.name); })
      ->add_option("NAME", a.name, "Map name")
      ->required();
  auto* drop = fam.command("drop", "Drop a map from the catalog (never touches shard data)",
                           [&](cli::Context& ctx) { drop_map(ctx, a.name, a.force); });
  drop->add_option("NAME", a.name, "Map name")->required();
  drop->add_flag("--force", a.force, "Also drop its mappings, table declarations and xrefs");
  return fam.main(argc, argv);
}
