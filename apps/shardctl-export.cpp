// shardctl export: the fleet as another program's configuration (man/shardctl-export.1).
#include <ctime>
#include <iostream>

#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/atomic_file.hpp"
#include "export/catalog_read.hpp"
#include "export/pgbouncer.hpp"

using namespace shardctl;

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct Commands {
  std::optional<std::string> map, output, pool_mode, listen;

  void pgbouncer(cli::Context& ctx) {
    std::optional<exporter::Listen> where;
    if (listen) where = exporter::parse_listen(*listen);
    catalog::Store store(ctx.catalog());
    auto entries = exporter::pgbouncer_entries(exporter::shards_to_export(store, map), pool_mode);
    exporter::BouncerDocument doc{ctx.catalog().where(), utc_now(), map, entries, where};
    std::string text = exporter::render_pgbouncer(doc);
    if (output && !ctx.dry_run())
      write_file_atomically(*output, text, "check the -o path and that its directory is writable");
    if (ctx.json()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& e : entries) {
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [k, v] : e.params) params[k] = v;
        list.push_back({{"name", e.name}, {"params", params}});
      }
      ctx.print_json({{"databases", list}, {"file", output ? nlohmann::json(*output) : nlohmann::json(nullptr)}, {"text", text}});
      return;
    }
    if (!output) {
      ctx.out() << text;
      return;
    }
    ctx.out() << (ctx.dry_run() ? "would write " : "wrote ") << entries.size() << " database entr"
              << (entries.size() == 1 ? "y" : "ies") << " to " << *output << '\n';
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("export", "Write the fleet as a pooler's configuration (PgBouncer's [databases])");
  Commands c;
  auto* pgb = fam.command("pgbouncer", "PgBouncer 1.18's [databases] section: one entry per shard",
                          [&](cli::Context& ctx) { c.pgbouncer(ctx); });
  pgb->add_option("--map", c.map, "Only the shards this map's mappings point at")->type_name("MAP");
  pgb->add_option("-o,--output", c.output, "Write to FILE (atomically: FILE.tmp.PID, then renamed) instead of stdout")
      ->type_name("FILE");
  pgb->add_option("--pool-mode", c.pool_mode, "pool_mode of every entry (default: the bouncer's own)")
      ->check(cli::IsMember({"session", "transaction", "statement"}))
      ->type_name("MODE");
  pgb->add_option("--listen", c.listen,
                  "The bouncer's address: adds, as comments, the `shard set NAME --app-dsn` lines pointing applications at it")
      ->type_name("HOST:PORT");
  return fam.main(argc, argv);
}
