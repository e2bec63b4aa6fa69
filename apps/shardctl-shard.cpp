// shardctl shard: register, list, inspect, change and retire shard databases.
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "fanout/fanout.hpp"
#include "confirmed_change.hpp"
#include "output/table.hpp"
#include "pg/dsn.hpp"
#include "prepare/prepare.hpp"

using namespace shardctl;

namespace {

// The replication and application DSNs as `list` and `show` print them: "-" when the shard has none.
std::string dsn_text(const std::optional<std::string>& dsn) { return dsn ? pg::display_dsn(*dsn) : "-"; }

void print_shard(cli::Context& ctx, const catalog::Shard& s) {
  if (ctx.json()) return ctx.print_json(catalog::to_json(s));
  ctx.out() << "name:            " << s.name << "\ndsn:             " << pg::display_dsn(s.dsn)
            << "\nstatus:          " << s.status << "\nreplication dsn: " << dsn_text(s.replication_dsn)
            << "\napp dsn:         " << dsn_text(s.app_dsn) << '\n';
}

// A DSN in a dry run's message: redacted (the stored form holds no password anyway).
std::string shown_dsn(const std::optional<std::string>& dsn) { return dsn ? pg::display_dsn(*dsn) : std::string(); }

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string name, dsn, status = "online";
  std::optional<std::string> new_status, replication_dsn, app_dsn;
  std::vector<std::string> names;
  std::optional<int> parallel;
  int connect_timeout = 5;
  bool force = false;

  void add(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.add_shard(name, dsn, parse_word<catalog::ShardStatus>(status), replication_dsn, app_dsn);
    // The new shard gets shardctl's shard-side objects when it answers; one that does not (not
    // created yet, down) is registered all the same, and `shard prepare` does it later.
    std::optional<prepare::Change> prepared;
    try {
      prepared = prepare::prepare_shard(s.dsn, "shard " + s.name, ctx.dry_run(), connect_timeout);
    } catch (const Error& e) {
      ctx.note("shard " + s.name + " not prepared: " + e.what() + "; run `shardctl shard prepare " + s.name +
               "` once it answers");
    }
    if (ctx.json()) {
      auto doc = catalog::to_json(s);
      doc["prepared"] = prepared ? nlohmann::json(std::string(prepare::to_text(*prepared))) : nlohmann::json(nullptr);
      return ctx.print_json(doc);
    }
    if (ctx.dry_run())
      ctx.out() << "would add shard " << s.name << " (" << s.dsn << ", " << s.status
                << (s.replication_dsn ? ", replication DSN " + shown_dsn(s.replication_dsn) : std::string())
                << (s.app_dsn ? ", application DSN " + shown_dsn(s.app_dsn) : std::string()) << ")"
                << (prepared && *prepared != prepare::Change::current
                        ? " and " + std::string(*prepared == prepare::Change::installed ? "install" : "upgrade") +
                              " shardctl's objects on it"
                        : std::string())
                << "\n";
    else
      ctx.out() << "added shard " << s.name << " (" << s.status << ")"
                << (prepared ? ", shard-side objects " + std::string(prepare::to_text(*prepared)) : std::string()) << "\n";
  }

  void prepare(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto targets = fanout::select_targets(store, fanout::Selection{std::nullopt, names});
    for (const auto& off : targets.offline) ctx.note("shard " + off + " is offline: left out (name it to prepare it)");
    auto results = prepare::prepare_shards(targets.run, ctx.parallel(parallel),
                                           ctx.dry_run(), connect_timeout);
    nlohmann::json docs = nlohmann::json::array();
    std::vector<std::string> unreachable;
    const fanout::Outcome* failed = nullptr;
    for (const auto& r : results) {
      const auto& o = r.outcome;
      // A shard refused for too many connections did not answer either (exit 69), named "refused".
      if (fanout::not_reached(o.state)) unreachable.push_back(o.shard);
      else if (!o.ok() && !failed) failed = &o;
      std::string what = !o.ok()                                  ? std::string(to_text(o.state))
                         : r.change == prepare::Change::current   ? "up to date"
                         : ctx.dry_run()                          ? (r.change == prepare::Change::installed ? "would install" : "would upgrade")
                                                                  : std::string(prepare::to_text(r.change));
      docs.push_back({{"shard", o.shard},
                      {"state", std::string(to_text(o.state))},
                      {"change", o.ok() ? nlohmann::json(std::string(prepare::to_text(r.change))) : nlohmann::json(nullptr)},
                      {"error", o.ok() ? nlohmann::json(nullptr) : nlohmann::json(o.error)}});
      if (!ctx.json()) ctx.out() << o.shard << '\t' << what << (o.ok() ? "" : ": " + o.error) << '\n';
    }
    if (ctx.json()) ctx.print_json({{"shards", docs}, {"offline", targets.offline}});
    if (!unreachable.empty()) {
      std::string list;
      for (const auto& n : unreachable) list += (list.empty() ? "" : ", ") + n;
      throw unavailable_error(std::to_string(unreachable.size()) + " shard(s) did not answer: " + list,
                              "run `shardctl shard prepare " + unreachable.front() + "` once it answers");
    }
    if (failed) throw Error(failed->kind, "shard " + failed->shard + ": " + failed->error, failed->hint);
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto shards = store.list_shards();
    if (ctx.json()) return ctx.print_json({{"shards", catalog::to_json(shards)}});
    output::TextTable t({"NAME", "STATUS", "DSN", "REPLICATION DSN", "APP DSN"});
    for (const auto& s : shards)
      t.add_row({s.name, std::string(catalog::to_text(s.status)), pg::display_dsn(s.dsn), dsn_text(s.replication_dsn),
                 dsn_text(s.app_dsn)});
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
    if (new_status) change.status = parse_word<catalog::ShardStatus>(*new_status);
    change.replication_dsn = replication_dsn;
    change.app_dsn = app_dsn;
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto s = store.set_shard(name, change);
    if (!ctx.dry_run() || ctx.json()) return print_shard(ctx, s);
    if (change.status) ctx.out() << "would set shard " << s.name << " status to " << s.status << '\n';
    if (change.replication_dsn)
      ctx.out() << (s.replication_dsn ? "would set shard " + s.name + " replication DSN to " + shown_dsn(s.replication_dsn)
                                      : "would remove the replication DSN of shard " + s.name)
                << '\n';
    if (change.app_dsn)
      ctx.out() << (s.app_dsn ? "would set shard " + s.name + " application DSN to " + shown_dsn(s.app_dsn)
                              : "would remove the application DSN of shard " + s.name)
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
  add->add_option("--app-dsn", c.app_dsn,
                  "Connection string applications are given for this shard, e.g. their PgBouncer (default: --dsn; no "
                  "password)")
      ->type_name("DSN");
  add->add_option("--connect-timeout", c.connect_timeout, "Seconds to wait for the shard when preparing it (default 5)")
      ->type_name("SECONDS")
      ->check(cli::whole_number(1));

  fam.command("list", "List the shards", [&](cli::Context& ctx) { c.list(ctx); });

  auto* show = fam.command("show", "Show one shard and the mappings it holds", [&](cli::Context& ctx) { c.show(ctx); });
  show->add_option("NAME", c.name, "Shard name")->required();

  auto* set = fam.command("set", "Change a shard's status, replication DSN or application DSN",
                          [&](cli::Context& ctx) { c.set(ctx); });
  set->add_option("NAME", c.name, "Shard name")->required();
  set->add_option("--status", c.new_status, "New status")
      ->check(cli::IsMember({"online", "readonly", "offline"}))
      ->type_name("online|readonly|offline");
  set->add_option("--replication-dsn", c.replication_dsn,
                  "New connection string for subscriptions to this shard (online moves); '' removes it (no password)")
      ->type_name("DSN");
  set->add_option("--app-dsn", c.app_dsn, "New connection string applications are given; '' removes it (no password)")
      ->type_name("DSN");
  set->callback([&] {
    if (!c.new_status && !c.replication_dsn && !c.app_dsn)
      throw cli::RequiredError("--status, --replication-dsn or --app-dsn");
  });

  auto* prep = fam.command("prepare", "Install or upgrade shardctl's shard-side objects on shards (default: every shard)",
                           [&](cli::Context& ctx) { c.prepare(ctx); });
  prep->add_option("NAME", c.names, "Shards to prepare (default: every shard that is not offline)");
  prep->add_option("--parallel", c.parallel, "Shards prepared at once (default: [defaults] parallel)")
      ->type_name("N")
      ->check(cli::whole_number(1));
  prep->add_option("--connect-timeout", c.connect_timeout, "Seconds to wait for each shard's connection (default 5)")
      ->type_name("SECONDS")
      ->check(cli::whole_number(1));

  auto* remove = fam.command("remove", "Remove a shard from the catalog (never touches its data)",
                             [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("NAME", c.name, "Shard name")->required();
  remove->add_flag("--force", c.force, "Also drop the shard's mappings from the catalog");

  return fam.main(argc, argv);
}
