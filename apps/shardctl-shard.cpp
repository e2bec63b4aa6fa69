// shardctl shard: register, list, inspect, change and retire shard databases.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "cli/family.hpp"
#include "confirmed_change.hpp"
#include "output/table.hpp"
#include "pg/dsn.hpp"

using namespace shardctl;

namespace {

// The replication DSN as `list` and `show` print it: "-" when the shard has none.
std::string replication_text(const catalog::Shard& s) {
  return s.replication_dsn ? pg::display_dsn(*s.replication_dsn) : "-";
}

void print_shard(cli::Context& ctx, const catalog::Shard& s) {
  if (ctx.json()) return ctx.print_json(catalog::to_json(s));
  ctx.out() << "name:            " << s.name << "\ndsn:             " << pg::display_dsn(s.dsn)
            << "\nstatus:          " << s.status << "\nreplication dsn: " << replication_text(s) << '\n';
}

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string name, dsn, status = "online";
  std::optional<std::string> new_status, replication_dsn;
  bool force = false;

  void add(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.add_shard(name, dsn, catalog::parse_shard_status(status), replication_dsn);
    if (ctx.json()) return ctx.print_json(catalog::to_json(s));
    if (ctx.dry_run())
      ctx.out() << "would add shard " << s.name << " (" << s.dsn << ", " << s.status
                << (s.replication_dsn ? ", replication DSN " + *s.replication_dsn : std::string()) << ")\n";
    else ctx.out() << "added shard " << s.name << " (" << s.status << ")\n";
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto shards = store.list_shards();
    if (ctx.json()) return ctx.print_json({{"shards", catalog::to_json(shards)}});
    output::TextTable t({"NAME", "STATUS", "DSN", "REPLICATION DSN"});
    for (const auto& s : shards)
      t.add_row({s.name, std::string(catalog::to_text(s.status)), pg::display_dsn(s.dsn), replication_text(s)});
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
    catalog::ShardChange change;
    if (new_status) change.status = catalog::parse_shard_status(*new_status);
    change.replication_dsn = replication_dsn;
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.set_shard(name, change);
    if (!ctx.dry_run() || ctx.json()) return print_shard(ctx, s);
    if (change.status) ctx.out() << "would set shard " << s.name << " status to " << s.status << '\n';
    if (change.replication_dsn)
      ctx.out() << (s.replication_dsn ? "would set shard " + s.name + " replication DSN to " + *s.replication_dsn
                                      : "would remove the replication DSN of shard " + s.name)
                << '\n';
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
  add->add_option("--replication-dsn", c.replication_dsn,
                  "Connection string other shards' servers subscribe to this one with in online moves (default: --dsn; "
                  "no password)")
      ->type_name("DSN");

  fam.command("list", "List the shards", [&](cli::Context& ctx) { c.list(ctx); });

  auto* show = fam.command("show", "Show one shard and the mappings it holds", [&](cli::Context& ctx) { c.show(ctx); });
  show->add_option("NAME", c.name, "Shard name")->required();

  auto* set = fam.command("set", "Change a shard's status or replication DSN", [&](cli::Context& ctx) { c.set(ctx); });
  set->add_option("NAME", c.name, "Shard name")->required();
  set->add_option("--status", c.new_status, "New status")
      ->check(cli::IsMember({"online", "readonly", "offline"}))
      ->type_name("online|readonly|offline");
  set->add_option("--replication-dsn", c.replication_dsn,
                  "New connection string for subscriptions to this shard (online moves); '' removes it (no password)")
      ->type_name("DSN");
  set->callback([&] {
    if (!c.new_status && !c.replication_dsn) throw cli::RequiredError("--status or --replication-dsn");
  });

  auto* remove = fam.command("remove", "Remove a shard from the catalog (never touches its data)",
                             [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("NAME", c.name, "Shard name")->required();
  remove->add_flag("--force", c.force, "Also drop the shard's mappings from the catalog");

  return fam.main(argc, argv);
}
