// shardctl rebalance: plan split/move/merge steps from the latest stats snapshot (a pure
// planner), and apply a plan file as journaled, resumable migration operations.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "planner/json.hpp"
#include "planner/render.hpp"
#include "rebalance/apply.hpp"
#include "rebalance/byte_size.hpp"
#include "rebalance/fleet.hpp"
#include "rebalance/plan_file.hpp"
#include "run_operation.hpp"
#include "stats/store.hpp"

using namespace shardctl;

namespace {

// Writes the file next to its final name, then renames it: a reader never sees half a plan.
void write_plan_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw usage_error("cannot write plan file " + path);
    out << text << '\n';
    if (!out.flush()) throw usage_error("cannot write plan file " + path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw usage_error("cannot write plan file " + path + ": " + ec.message());
}

// The options main() defines; each command runs as one member function.
struct Commands {
  std::optional<std::string> map, max_bytes, output, max_age;
  std::string objective = "size";
  std::optional<int> max_moves, parallel, batch_size;
  apps::OnlineFlags online;  // apply --online
  std::vector<std::string> exclude, drain;
  std::optional<double> threshold, min_improvement;
  std::string plan_path;

  // The planner's options from the command line, every shard named in them checked first.
  planner::Options planner_options(catalog::Store& store) const {
    planner::Options opt;
    opt.objective = parse_word<planner::Objective>(objective);
    opt.batch_bytes = migrate::default_batch_bytes;  // what apply's steps batch by: their estimate
    opt.map = map;
    opt.max_moves = max_moves;
    if (max_bytes) {
      opt.max_bytes = rebalance::parse_byte_size(*max_bytes);
      if (!opt.max_bytes) throw usage_error("--max-bytes '" + *max_bytes + "' is not a size", "write e.g. 500M, 10GB or 1073741824");
    }
    opt.exclude_shards = exclude;
    opt.drain_shards = drain;
    if (threshold) opt.threshold = *threshold;
    if (min_improvement) opt.min_improvement = *min_improvement;
    for (const auto& s : exclude) store.get_shard(s);
    for (const auto& s : drain) store.get_shard(s);
    return opt;
  }

  // What the plan file records of the request, so that `apply` can show what was asked.
  nlohmann::json options_json(const planner::Options& opt) const {
    return {{"map", map ? nlohmann::json(*map) : nlohmann::json(nullptr)},
            {"objective", objective},
            {"max_moves", max_moves ? nlohmann::json(*max_moves) : nlohmann::json(nullptr)},
            {"max_bytes", opt.max_bytes ? nlohmann::json(*opt.max_bytes) : nlohmann::json(nullptr)},
            {"exclude_shards", exclude},
            {"drain_shards", drain},
            {"threshold", opt.threshold},
            {"min_improvement", opt.min_improvement}};
  }

  void plan(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::Writes::preview);  // checks the catalog's version first
    auto snap = stats::latest_snapshot(ctx.catalog(), map);
    if (!snap)
      throw usage_error(map ? "no stats snapshot covers map " + *map : std::string("there is no stats snapshot to plan from"),
                        "run shardctl stats collect");
    auto in = rebalance::build_fleet(ctx.catalog(), ctx.config(), *snap, map);
    for (const auto& n : in.notes) ctx.note(n);
    auto opt = planner_options(store);
    rebalance::PlanFile pf;
    for (const auto& m : snap->maps)
      if (!map || m.name == *map) pf.maps.push_back({m.name, m.version});
    pf.snapshot_id = snap->id;
    pf.snapshot_fingerprint = snap->fingerprint;
    pf.taken_at = snap->taken_at;
    pf.options = options_json(opt);
    pf.plan = planner::plan(in.fleet, opt);
    auto doc = rebalance::to_json(pf);
    if (output) {
      write_plan_file(*output, doc.dump(2));
      ctx.note("plan written to " + *output + " (" + std::to_string(pf.plan.steps.size()) + " step(s)); apply it with `shardctl rebalance apply " + *output + "`");
    }
    if (ctx.json()) return ctx.print_json(doc);
    ctx.out() << "stats snapshot " << snap->id << " taken " << snap->taken_at << "\n";
    planner::print_text(ctx.out(), pf.plan);
  }

  void apply(cli::Context& ctx) {
    // The file first: a plan that is refused needs no catalog.
    auto pf = rebalance::read_plan_file(plan_path);
    catalog::Store store(ctx.catalog(), catalog::Writes::preview);  // checks the catalog's version first
    rebalance::ApplyOptions opt;
    opt.parallel = parallel.value_or(1);
    if (max_age) {
      auto d = config::parse_duration(*max_age);
      if (!d) throw usage_error("--max-age '" + *max_age + "' is not a duration", "write e.g. 30m, 2h or 1d");
      opt.max_age = *d;
    }
    opt.dry_run = ctx.dry_run();
    opt.batch_keys = batch_size;
    opt.online = online.settings();
    opt.engine.fence_grace = ctx.config().fence_grace;
    opt.catalog_dsn = ctx.catalog_dsn();
    opt.note = [&](const std::string& line) { ctx.note(line); };
    auto r = rebalance::apply(ctx.catalog(), pf, opt);
    if (ctx.json()) ctx.print_json(rebalance::to_json(r));
    else print_steps(ctx, r);
    // --dry-run: every step shown, then the first refusal with its exit code and hint.
    if (r.preview_error) std::rethrow_exception(r.preview_error);
  }

  static void print_steps(cli::Context& ctx, const rebalance::ApplyResult& r) {
    if (r.resumed && !ctx.dry_run()) ctx.out() << "resumed plan " << r.fingerprint.substr(0, 12) << "\n";
    for (const auto& s : r.steps) {
      ctx.out() << "step " << s.step << " " << rebalance::status_text(s) << ": " << s.command;
      if (!s.op_id.empty()) ctx.out() << " (operation " << s.op_id << ", " << s.rows << " rows)";
      else if (s.status == rebalance::StepOutcome::would_run) ctx.out() << " (" << s.rows << " rows in " << s.batches << " batch(es))";
      if (!s.error.empty()) ctx.out() << ": " << s.error;
      ctx.out() << '\n';
    }
    if (r.steps.empty()) ctx.out() << "the plan has no step: nothing to do\n";
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("rebalance", "Plan split, move and merge steps from measured stats; apply a plan as resumable operations");
  Commands c;

  auto* plan = fam.command("plan", "Plan the steps that balance the shards, from the latest stats snapshot", [&](cli::Context& ctx) { c.plan(ctx); });
  plan->add_option("--map", c.map, "Only this map's mappings move (default: every map)")->type_name("MAP");
  plan->add_option("--objective", c.objective, "What to balance: bytes (size), load, or both")
      ->check(cli::IsMember({"size", "load", "both"}))
      ->type_name("size|load|both");
  plan->add_option("--max-moves", c.max_moves, "At most this many steps")->check(cli::whole_number(1))->type_name("N");
  plan->add_option("--max-bytes", c.max_bytes, "At most this many bytes moved in all (e.g. 500M, 10GB)")->type_name("BYTES");
  plan->add_option("--exclude-shard", c.exclude, "A shard that neither gives nor receives (repeatable)")->type_name("SHARD");
  plan->add_option("--drain", c.drain, "A shard to empty: it gives everything away and receives nothing (repeatable)")->type_name("SHARD");
  plan->add_option("--threshold", c.threshold, "Within this fraction of its target a shard counts as balanced (default 0.05)")
      ->check(cli::Range(0.0, 10.0))
      ->type_name("X");
  plan->add_option("--min-improvement", c.min_improvement, "A step must improve balance at least this much per byte moved (default 0)")
      ->check(cli::Range(0.0, 1e9))
      ->type_name("X");
  plan->add_option("-o,--output", c.output, "Also write the plan file for `rebalance apply`")->type_name("PLAN.json");

  auto* apply = fam.command("apply", "Run a plan file's steps as journaled operations; run it again to resume", [&](cli::Context& ctx) { c.apply(ctx); });
  apply->add_option("PLAN", c.plan_path, "Plan file written by `rebalance plan -o`")->required()->type_name("PLAN.json");
  apply->add_option("--parallel", c.parallel, "Steps run at once; never two on one shard (default 1)")
      ->check(cli::whole_number(1))
      ->type_name("N");
  apps::add_batch_size(*apply, c.batch_size);
  c.online.add_to(*apply);
  apply->add_option("--max-age", c.max_age, "Refuse stats older than this (e.g. 30m, 2h; default: no limit)")->type_name("DURATION");
  return fam.main(argc, argv);
}
