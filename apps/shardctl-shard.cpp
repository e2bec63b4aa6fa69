// shardctl shard: register, list, inspect, change and retire shard databases.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "cli/family.hpp"
#include "confirmed_change.hpp"
#include "output/table.hpp"
#include "pg/dsn.hpp"

using namespace shardctl;

namespace {

void print_shard(cli::Context& ctx, const catalog::Shard& s) {
  if (ctx.json()) return ctx.print_json(catalog::to_json(s));
  ctx.out() << "name:   " << s.name << "\ndsn:    " << pg::display_dsn(s.dsn) << "\nstatus: " << s.status << '\n';
}

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string name, dsn, status = "online";
  bool force = false;

  void add(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.add_shard(name, dsn, catalog::parse_shard_status(status));
    if (ctx.json()) return ctx.print_json(catalog::to_json(s));
    if (ctx.dry_run()) ctx.out() << "would add shard " << s.name << " (" << s.dsn << ", " << s.status << ")\n";
    else ctx.out() << "added shard " << s.name << " (" << s.status << ")\n";
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto shards = store.list_shards();
    if (ctx.json()) return ctx.print_json({{"shards", catalog::to_json(shards)}});
    output::TextTable t({"NAME", "STATUS", "DSN"});
    for (const auto& s : shards) t.add_row({s.name, std::string(catalog::to_text(s.status)), pg::display_dsn(s.dsn)});
    t.print(ctx.out());
  }

  void show(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto s = store.get_shard(name);
    std::vector<catalog::Mapping> held;
    for (auto& m : store.list_mappings(std::nullopt))
      if (m.shard == s.name) held.push_back(std::move(m));
    if (ctx.json()) {
      auto doc = catalog::to_json(s);
      doc["mappings"] = nlohmann::json::array();
      for (const auto& m : held) doc["mappings"].push_back(catalog::to_json(m));
      return ctx.print_json(doc);
    }
    print_shard(ctx, s);
    ctx.out() << "mappings: " << held.size() << '\n';
    for (const auto& m : held)
      ctx.out() << "  " << m.map << "  " << catalog::mapping_key_text(m) << "  (" << m.status << ")\n";
  }

  void set(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.set_shard_status(name, catalog::parse_shard_status(status));
    if (ctx.dry_run() && !ctx.json()) ctx.out() << "would set shard " << s.name << " status to " << s.status << '\n';
    else print_shard(ctx, s);
  }

  void remove(cli::Context& ctx) {
    apps::confirmed_change(
        ctx, "removed", [&](catalog::Store& store) { store.remove_shard(name, force); },
        [&] { return "remove shard " + name + " from the catalog?"; },
        [&](bool would) {
          return apps::Told{name, would ? "would remove shard " + name + (force ? " and its mappings" : "") + " from the catalog"
                                        : "removed shard " + name};
        });
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("shard", "Register, list, inspect and retire shard databases");
  Commands c;

  auto* add = fam.command("add", "Register a shard database", [&](cli::Context& ctx) { c.add(ctx); });
  add->add_option("NAME", c.name, "Shard name")->required();
  add->add_option("--dsn", c.dsn, "Connection string (no password: use ~/.pgpass)")->required()->type_name("DSN");
  add->add_option("--status", c.status, "Initial status")
      ->check(cli::IsMember({"online", "readonly", "offline"}))
      ->type_name("online|readonly|offline");

  fam.command("list", "List the shards", [&](cli::Context& ctx) { c.list(ctx); });

  auto* show = fam.command("show", "Show one shard and the mappings it holds", [&](cli::Context& ctx) { c.show(ctx); });
  show->add_option("NAME", c.name, "Shard name")->required();

  auto* set = fam.command("set", "Change a shard's status", [&](cli::Context& ctx) { c.set(ctx); });
  set->add_option("NAME", c.name, "Shard name")->required();
  set->add_option("--status", c.status, "New status")
      ->required()
      ->check(cli::IsMember({"online", "readonly", "offline"}))
      ->type_name("online|readonly|offline");

  auto* remove = fam.command("remove", "Remove a shard from the catalog (never touches its data)",
                             [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("NAME", c.name, "Shard name")->required();
  remove->add_flag("--force", c.force, "Also drop the shard's mappings from the catalog");

  return fam.main(argc, argv);
}
