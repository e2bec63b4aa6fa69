// `shardctl schema drift`: defined here, included by apps/shardctl-schema.cpp, so the drift
// command (options, handler, rendering) stays in one place beside the family's other commands.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "drift/drift.hpp"
#include "drift/render.hpp"
#include "output/junit.hpp"

inline void add_drift_command(shardctl::cli::Family& fam) {
  using namespace shardctl;
  struct DriftArgs {
    std::optional<std::string> reference, map, shards, junit;
    std::vector<std::string> ignore;
    std::optional<int> parallel;
    int connect_timeout = 5;
  };
  // Owned by the handler, which lives as long as the Family.
  auto args = std::make_shared<DriftArgs>();
  auto* cmd = fam.command("drift", "Compare the structure of every shard; exit 1 when they differ", [args](cli::Context& ctx) {
    drift::Options opt;
    opt.selection.map = args->map;
    if (args->shards) opt.selection.shards = fanout::split_shard_list(*args->shards);
    opt.reference = args->reference;
    opt.ignore = args->ignore;
    opt.parallel = ctx.parallel(args->parallel);
    opt.connect_timeout = args->connect_timeout;
    catalog::Store store(ctx.catalog());
    auto report = drift::run(store, opt);
    if (args->junit) output::write_junit(*args->junit, "shardctl.schema.drift", drift::junit_cases(report));
    if (ctx.json()) ctx.print_json(drift::to_json(report));
    else drift::print_text(ctx.out(), report);
    ctx.set_exit_status(report.exit_code());
  });
  cmd->add_option("--reference", args->reference, "Compare against this shard instead of the majority")->type_name("SHARD");
  cmd->add_option("--ignore", args->ignore,
                  "Leave out objects whose KIND:NAME or NAME matches this glob, e.g. 'public.tmp_*' or 'index:*_old' (repeatable)")
      ->type_name("PATTERN")
      ->allow_extra_args(false);
  cmd->add_option("--map", args->map, "Only the shards this map routes to")->type_name("MAP");
  cmd->add_option("--shards", args->shards, "Only these shards (comma-separated names)")->type_name("LIST");
  cmd->add_option("--parallel", args->parallel, "Shards read at once (default: [defaults] parallel)")
      ->check(cli::whole_number(1))
      ->type_name("N");
  cmd->add_option("--connect-timeout", args->connect_timeout, "Seconds to wait for each shard's connection (default 5)")
      ->check(cli::whole_number(1))
      ->type_name("SECONDS");
  cmd->add_option("--junit", args->junit, "Also write a JUnit XML report, one test case per shard")->type_name("FILE");
}
