// shardctl split: move the upper (or lower) part of a mapping to another shard, batch by batch.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/family.hpp"
#include "core/error.hpp"
#include "migrate/operation.hpp"
#include "migrate/render.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("split", "Split a mapping and move one side to another shard");
  migrate::SplitRequest req;
  std::string move = "upper";
  std::optional<int> batch_size;
  fam.app().add_option("--map", req.map, "Map to split")->required()->type_name("MAP");
  fam.app().add_option("--at", req.at, "Split point: the first key of the upper part")->required()->type_name("KEY");
  fam.app().add_option("--to", req.to, "Shard that receives the moving part")->required()->type_name("SHARD");
  fam.app().add_option("--move", move, "Which side moves")->check(CLI::IsMember({"upper", "lower"}))->type_name("upper|lower");
  fam.app().add_option("--batch-size", batch_size, "Distinct keys per batch (default: config defaults.batch_size)")
      ->type_name("N");

  fam.root_handler([&](cli::Context& ctx) {
    req.move_upper = move == "upper";
    req.batch_size = batch_size ? *batch_size : static_cast<int>(ctx.config().batch_size);
    migrate::Engine engine(ctx.catalog());
    auto plan = engine.plan_split(req);
    for (const auto& w : plan.warnings) ctx.warn(w);
    if (ctx.dry_run()) {
      if (ctx.json()) {
        nlohmann::json batches = nlohmann::json::array();
        for (const auto& b : plan.batches) batches.push_back(routing::format_range(b));
        return ctx.print_json({{"map", plan.map.name}, {"range", routing::format_range(plan.range)},
                               {"source", plan.source.name}, {"target", plan.target.name}, {"batches", batches}});
      }
      migrate::print_plan(ctx.out(), plan);
      return;
    }
    auto id = engine.start(plan, req);
    ctx.note("operation " + id + ": moving " + routing::format_range(plan.range) + " of map " + plan.map.name + " from " +
             plan.source.name + " to " + plan.target.name + " in " + std::to_string(plan.batches.size()) + " batch(es)");
    bool tty = isatty(STDERR_FILENO) && !ctx.options().quiet;
    auto t0 = std::chrono::steady_clock::now();
    migrate::Progress last;
    auto status = engine.run(id, [&](const migrate::Progress& p) {
      last = p;
      if (!tty) return;
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cerr << migrate::progress_line(p, s) << std::flush;
    });
    if (tty) std::cerr << '\n';
    char times[200];
    std::snprintf(times, sizeof times, "time: copy %.2f s (%.1f MB), verify %.2f s, purge %.2f s, catalog %.2f s",
                  last.copy_seconds, static_cast<double>(last.bytes) / 1e6, last.verify_seconds, last.purge_seconds,
                  last.catalog_seconds);
    ctx.verbose(times);
    if (ctx.json()) return ctx.print_json(migrate::to_json(status));
    ctx.out() << "operation " << status.id << " " << status.status << ": " << status.rows_moved << " rows in "
              << status.batches_done << " batch(es) moved to " << status.target << '\n';
  });
  return fam.main(argc, argv);
}
