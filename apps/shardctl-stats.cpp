// shardctl stats: measure the fleet (rows, live and physical bytes and a key histogram per mapping; size and
// pg_stat_user_tables counters per shard) into a catalog snapshot, and show the latest one.
#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "stats/collect.hpp"
#include "stats/render.hpp"
#include "stats/store.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("stats", "Measure rows, live and physical bytes, key histograms and load per mapping and shard; show the latest snapshot");
  stats::CollectOptions co;
  std::optional<int> parallel;
  std::optional<std::string> show_map;

  auto* collect = fam.command("collect", "Measure every shard (one query per table per shard) and record a snapshot",
                              [&](cli::Context& ctx) {
    catalog::Store check(ctx.catalog(), catalog::Writes::preview);  // the catalog exists, at this version
    co.parallel = ctx.parallel(parallel);
    co.dry_run = ctx.dry_run();
    auto snap = stats::collect(ctx.catalog(), ctx.config(), co);
    if (ctx.json()) return ctx.print_json(stats::to_json(snap));
    if (ctx.dry_run()) ctx.out() << "dry run: nothing recorded\n";
    stats::print_snapshot(ctx.out(), snap);
  });
  collect->add_option("--map", co.map, "Only this map's mappings (default: every map)")->type_name("MAP");
  collect->add_option("--load-file", co.load_file, "Per-key load from the application: CSV lines key,weight (needs --map with several maps)")
      ->type_name("FILE");
  collect->add_option("--parallel", parallel, "Shards measured at once (default: [defaults] parallel)")
      ->check(cli::whole_number(1))
      ->type_name("N");
  collect->add_option("--connect-timeout", co.connect_timeout, "Seconds to wait for each shard's connection (default 5)")
      ->check(cli::whole_number(1))
      ->type_name("SECONDS");

  auto* show = fam.command("show", "Show the latest snapshot (text, or --format json)", [&](cli::Context& ctx) {
    catalog::Store check(ctx.catalog(), catalog::Writes::preview);
    auto snap = stats::latest_snapshot(ctx.catalog(), show_map);
    if (!snap) throw usage_error(show_map ? "no stats snapshot covers map " + *show_map : std::string("there is no stats snapshot yet"),
                                 "run shardctl stats collect");
    if (show_map) {
      std::erase_if(snap->mappings, [&](const stats::MappingStats& m) { return m.map != *show_map; });
      std::erase_if(snap->maps, [&](const stats::MapInfo& m) { return m.name != *show_map; });
    }
    if (ctx.json()) return ctx.print_json(stats::to_json(*snap));
    stats::print_snapshot(ctx.out(), *snap);
  });
  show->add_option("--map", show_map, "Only this map's mappings")->type_name("MAP");
  return fam.main(argc, argv);
}
