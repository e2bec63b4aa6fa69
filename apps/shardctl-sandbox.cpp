// shardctl sandbox: local throwaway PostgreSQL clusters with a sample fleet.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/family.hpp"
#include "output/table.hpp"
#include "sandbox/sandbox.hpp"

using namespace shardctl;
using nlohmann::json;

namespace {

json fleet_json(const sandbox::Fleet& f) {
  json shards = json::array();
  for (const auto& [n, d] : f.shards) shards.push_back({{"name", n}, {"dsn", d}});
  return {{"name", f.name}, {"catalog", f.catalog_dsn}, {"shards", shards}};
}

json status_json(const sandbox::Sandbox& sb) {
  json clusters = json::array();
  bool all = sb.exists();
  for (const auto& c : sb.status()) {
    clusters.push_back({{"name", c.name}, {"port", c.port}, {"data_dir", c.data_dir.string()}, {"running", c.running},
                        {"pid", c.running ? json(c.pid) : json(nullptr)}});
    all = all && c.running;
  }
  json fleets = json::array();
  for (const auto& f : sb.fleets()) fleets.push_back(fleet_json(f));
  return {{"dir", sb.dir().string()}, {"exists", sb.exists()}, {"running", all},
          {"socket_dir", sb.run_dir().string()}, {"server_dir", sb.server_dir().string()},
          {"clusters", clusters}, {"fleets", fleets}};
}

// `eval "$(shardctl sandbox env)"` exports SHARDCTL_CONFIG=DIR/shardctl.toml together with
// SHARDCTL_SANDBOX_DIR=DIR, and `sandbox down` removes that file. The documented reset
// (`shardctl sandbox down && shardctl sandbox up`) must not then fail on the missing file, so
// the sandbox commands (which read nothing from a config) forget a $SHARDCTL_CONFIG naming the
// missing config of the sandbox directory they work on. Any other missing file stays an error.
void forget_removed_sandbox_config() {
  const char* env = std::getenv("SHARDCTL_CONFIG");
  if (!env || !*env) return;
  std::error_code ec;
  std::filesystem::path named = std::filesystem::absolute(env, ec).lexically_normal();
  if (ec || std::filesystem::exists(named, ec)) return;
  if (named == sandbox::default_sandbox_dir().lexically_normal() / "shardctl.toml") ::unsetenv("SHARDCTL_CONFIG");
}

// The options main() defines; each command runs as one member function.
struct Commands {
  std::optional<std::string> dir;
  sandbox::UpOptions up_opts;
  sandbox::FleetOptions fleet_opts;
  bool no_fleet = false;
  std::string fleet_name;

  void up(cli::Context& ctx) {
    sandbox::Sandbox sb(dir);
    up_opts.fleet = !no_fleet;
    if (ctx.dry_run()) {
      if (ctx.json())
        return ctx.print_json({{"dir", sb.dir().string()}, {"exists", sb.exists()}, {"fleet", up_opts.fleet},
                               {"shards", up_opts.shards}});
      ctx.out() << "would " << (sb.exists() ? "start" : "create") << " the sandbox in " << sb.dir().string()
                << " (1 catalog cluster, 2 shard clusters"
                << (up_opts.fleet ? ", fleet demo with " + std::to_string(up_opts.shards) + " shards" : "") << ")\n";
      return;
    }
    auto r = sb.up(up_opts);
    if (ctx.json()) {
      auto doc = status_json(sb);
      doc["created"] = r.created;
      doc["started"] = r.started;
      doc["config"] = r.fleet ? json(r.config_file.string()) : json(nullptr);
      return ctx.print_json(doc);
    }
    auto& out = ctx.out();
    out << (r.created ? "created" : "sandbox exists:") << " " << sb.dir().string() << '\n';
    if (sb.server_dir() != sb.dir())
      out << "clusters in " << sb.server_dir().string() << " (the server user cannot reach " << sb.dir().string()
          << ")\n";
    for (const auto& c : sb.status())
      out << "  cluster " << c.name << ": port " << c.port << (c.running ? ", running" : ", stopped") << '\n';
    if (r.fleet) {
      out << "fleet " << r.fleet->name << ": catalog " << r.fleet->catalog_dsn << '\n';
      for (const auto& [n, d] : r.fleet->shards) out << "  " << n << ": " << d << '\n';
      out << "config: " << r.config_file.string() << (r.wrote_cwd_config ? " (and ./shardctl.toml)" : "") << "\n\n";
      if (!ctx.options().quiet)
        out << "Next:\n"
               "  eval \"$(shardctl sandbox env" << (dir ? " --dir " + sb.dir().string() : "") << ")\"\n"
               "  shardctl map show customers\n"
               "  shardctl lookup --map customers 1 500 4000\n"
               "  psql -c 'select count(*) from orders' \"$(shardctl shard show shard_1 --format json | jq -r .dsn)\"\n";
    }
  }

  void down(cli::Context& ctx) {
    sandbox::Sandbox sb(dir);
    if (ctx.dry_run()) {
      if (ctx.json()) return ctx.print_json({{"dir", sb.dir().string()}, {"exists", sb.exists()}});
      ctx.out() << "would stop the sandbox clusters and remove " << sb.dir().string() << '\n';
      return;
    }
    auto stopped = sb.down();
    if (ctx.json()) return ctx.print_json({{"dir", sb.dir().string()}, {"stopped", stopped}});
    ctx.out() << "removed " << sb.dir().string() << " (stopped " << stopped.size() << " cluster(s))\n";
  }

  void status(cli::Context& ctx) {
    sandbox::Sandbox sb(dir);
    auto doc = status_json(sb);
    if (ctx.json()) return ctx.print_json(doc);
    if (!sb.exists()) {
      ctx.out() << "no sandbox in " << sb.dir().string() << '\n';
      return;
    }
    ctx.out() << "sandbox " << sb.dir().string() << '\n';
    if (sb.server_dir() != sb.dir()) ctx.out() << "clusters in " << sb.server_dir().string() << '\n';
    output::TextTable t({"CLUSTER", "PORT", "STATE", "PID"});
    for (const auto& c : sb.status())
      t.add_row({c.name, std::to_string(c.port), c.running ? "running" : "stopped", c.running ? std::to_string(c.pid) : "-"});
    t.print(ctx.out());
    for (const auto& f : sb.fleets())
      ctx.out() << "fleet " << f.name << ": " << f.shards.size() << " shard(s), catalog " << f.catalog_dsn << '\n';
  }

  void env(cli::Context& ctx) {
    sandbox::Sandbox sb(dir);
    if (ctx.json()) return ctx.print_json(sb.env_json());
    ctx.out() << sb.env_script();
  }

  void fleet(cli::Context& ctx) {
    sandbox::Sandbox sb(dir);
    fleet_opts.from_template = true;
    fleet_opts.preview = ctx.dry_run();
    auto f = sb.create_fleet(fleet_name, fleet_opts);
    if (ctx.dry_run()) {
      if (ctx.json()) return ctx.print_json({{"name", f.name}, {"shards", fleet_opts.shards}});
      ctx.out() << "would create fleet " << f.name << " with " << fleet_opts.shards << " shard database(s)\n";
      return;
    }
    if (ctx.json()) return ctx.print_json(fleet_json(f));
    ctx.out() << f.catalog_dsn << '\n';
  }
};

}  // namespace

int main(int argc, char** argv) {
  forget_removed_sandbox_config();
  cli::Family fam("sandbox", "Local throwaway PostgreSQL clusters with sample data");
  Commands c;

  auto add_dir = [&](cli::App* cmd) {
    cmd->add_option("--dir", c.dir, "Sandbox directory (default: $SHARDCTL_SANDBOX_DIR, else ./.shardctl/sandbox)")
        ->type_name("DIR");
  };

  auto* up = fam.command("up", "Create (or restart) the sandbox and its sample fleet", [&](cli::Context& ctx) { c.up(ctx); });
  add_dir(up);
  up->add_option("--shards", c.up_opts.shards, "Shard databases of the sample fleet (default 4)")->type_name("N");
  up->add_option("--scale", c.up_opts.scale, "Sample size: 1000 x S customers (default 1)")->type_name("S");
  up->add_flag("--no-fleet", c.no_fleet, "Only start the clusters; create no fleet and no data");

  auto* down = fam.command("down", "Stop every sandbox cluster and remove the directory", [&](cli::Context& ctx) { c.down(ctx); });
  add_dir(down);

  auto* status = fam.command("status", "Show the sandbox clusters and fleets", [&](cli::Context& ctx) { c.status(ctx); });
  add_dir(status);

  auto* env = fam.command("env", "Print shell exports for the sandbox: eval \"$(shardctl sandbox env)\"",
                          [&](cli::Context& ctx) { c.env(ctx); });
  add_dir(env);

  auto* fleet = fam.command("fleet", "Create another fleet (catalog + shard databases) on the sandbox",
                            [&](cli::Context& ctx) { c.fleet(ctx); });
  add_dir(fleet);
  fleet->add_option("NAME", c.fleet_name, "Fleet name ([a-z][a-z0-9_]*)")->required();
  fleet->add_option("--shards", c.fleet_opts.shards, "Shard databases (default 4)")->type_name("N");
  fleet->add_option("--scale", c.fleet_opts.scale, "Sample size: 1000 x S customers (default 1)")->type_name("S");
  fleet->add_flag("--empty", c.fleet_opts.empty, "Initialized catalog and empty databases; nothing registered");

  return fam.main(argc, argv);
}
