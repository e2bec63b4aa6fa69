// What split, merge and move share once their plan is made: print it for --dry-run, or
// journal it, run it with a progress line on a TTY, and report the result.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <iostream>

#include "cli/app.hpp"
#include "cli/checks.hpp"
#include "cli/context.hpp"
#include "cli/family.hpp"
#include "migrate/operation.hpp"
#include "migrate/render.hpp"
#include "journal/journal.hpp"

namespace shardctl::apps {

// The engine options the configuration sets.
inline migrate::EngineOptions engine_options(cli::Context& ctx) {
  migrate::EngineOptions o;
  o.fence_grace = ctx.config().fence_grace;
  // The checked load and purge (FK triggers never skipped): for comparing the two paths, and
  // for the test suite's fallback runs.
  if (const char* c = std::getenv("SHARDCTL_CHECKED_LOAD"); c && *c && std::string(c) != "0") o.checked_load = true;
  return o;
}

// The flags split, merge and move share besides their request: --parallel, --verify-fk and
// --sync-references.
struct RunFlags {
  std::optional<int> parallel;
  bool verify_fk = false;
  bool sync_references = false;

  void add_to(cli::App& app) {
    app.add_option("--parallel", parallel,
                   "Connections the target is read over to verify a batch, tables and key parts at once (default 1)")
        ->check(cli::whole_number(1, 64))
        ->type_name("N");
    app.add_flag("--verify-fk", verify_fk,
                 "When done, check every foreign key of the moved rows on the target (an anti-join of the moved range)");
    app.add_flag("--sync-references", sync_references,
                 "Make the target's reference tables identical to the source's first where they differ (else refused)");
  }
  migrate::EngineOptions engine_options(cli::Context& ctx) const {
    auto o = apps::engine_options(ctx);
    o.verify_fk = verify_fk;
    o.sync_references = sync_references;
    if (parallel) o.parallel = *parallel;
    return o;
  }
};

// --batch-size, declared once for split, merge, move and `rebalance apply`: its value goes
// through migrate::batch_sizing, so a rebalance step batches as the same command typed by hand.
inline void add_batch_size(cli::App& app, std::optional<int>& keys) {
  app.add_option("--batch-size", keys, "Distinct keys per batch (default: batches of about 64 MB, sized from the source's statistics)")
      ->type_name("N");
}

void run_operation(cli::Context& ctx, migrate::Engine& engine, const migrate::Plan& plan);

// --online and its settings, for split, merge, move and `rebalance apply` (migrate/online.hpp).
struct OnlineFlags {
  bool online = false;
  std::optional<double> max_lag, cutover_timeout;

  void add_to(cli::App& app) {
    app.add_flag("--online", online,
                 "Keep the moving keys writable: each batch streams by logical replication and cuts over with writers "
                 "waiting, not refused");
    add_settings_to(app, "With --online: the replication lag a cut-over starts from (default 1)",
                    "With --online: the longest a cut-over makes writers wait before it gives up and tries again (default 2)");
  }
  // --max-lag and --cutover-timeout alone, with these descriptions (`op resume`).
  void add_settings_to(cli::App& app, const std::string& lag_help, const std::string& timeout_help) {
    app.add_option("--max-lag", max_lag, lag_help)->type_name("SECONDS");
    app.add_option("--cutover-timeout", cutover_timeout, timeout_help)->type_name("SECONDS");
  }
  // The settings, or none without --online; a usage error for a setting without it or not
  // above zero.
  std::optional<migrate::OnlineSettings> settings() const {
    if (!online) {
      if (max_lag || cutover_timeout)
        throw usage_error(std::string(max_lag ? "--max-lag" : "--cutover-timeout") + " needs --online", "add --online, or drop it");
      return std::nullopt;
    }
    migrate::OnlineSettings s;
    if (auto v = max_lag_seconds()) s.max_lag_seconds = *v;
    if (auto v = cutover_timeout_ms()) s.cutover_timeout_ms = *v;
    return s;
  }
  std::optional<double> max_lag_seconds() const {
    if (max_lag) positive("--max-lag", *max_lag);
    return max_lag;
  }
  std::optional<int> cutover_timeout_ms() const {
    if (!cutover_timeout) return std::nullopt;
    positive("--cutover-timeout", *cutover_timeout);
    return std::max(1, static_cast<int>(*cutover_timeout * 1000));
  }

 private:
  static void positive(const char* flag, double v) {
    if (!(v > 0) || v > 3600)
      throw usage_error(std::string(flag) + " must be above 0 and at most 3600 seconds", "e.g. " + std::string(flag) + " 0.5");
  }
};

// What split, merge and move share besides their request: the options (--batch-size, then
// --parallel and --verify-fk) and the run: batch sizing, the engine, plan, run_operation.
struct MigrationCommand {
  std::optional<int> batch_size;
  RunFlags flags;
  OnlineFlags online;

  void add_to(cli::App& app) {
    add_batch_size(app, batch_size);
    flags.add_to(app);
    online.add_to(app);
  }
  // `plan(engine, request)` makes the family's plan (Engine::plan_split, plan_merge, plan_move).
  template <typename Request, typename PlanFn>
  void run(cli::Context& ctx, Request& request, PlanFn plan) const {
    migrate::batch_sizing(batch_size, request.batch_size, request.batch_bytes);
    auto online_settings = online.settings();
    migrate::Engine engine(ctx.catalog(), flags.engine_options(ctx));
    migrate::Plan made = plan(engine, request);
    if (online_settings) {
      made.online = online_settings;
      engine.check_online(made);
    }
    run_operation(ctx, engine, made);
  }
};

// The rest of split's, merge's and move's main once the family defined its request's options:
// the options they share, and the run.
template <typename Request, typename PlanFn>
int migration_main(cli::Family& fam, int argc, char** argv, Request& request, PlanFn plan) {
  MigrationCommand migration;
  migration.add_to(fam.app());
  fam.root_handler([&](cli::Context& ctx) { migration.run(ctx, request, plan); });
  return fam.main(argc, argv);
}

inline void run_operation(cli::Context& ctx, migrate::Engine& engine, const migrate::Plan& plan) {
  for (const auto& w : plan.warnings) ctx.warn(w);
  auto id = engine.start(plan, ctx.dry_run());  // a dry run stops before the journal's first write
  if (ctx.dry_run()) {
    if (ctx.json()) return ctx.print_json(migrate::plan_json(plan));
    migrate::print_plan(ctx.out(), plan);
    return;
  }
  std::string what;
  for (const auto& s : plan.segments)
    what += (what.empty() ? "" : ", ") +
            (plan.point ? "key " + routing::format_key(*plan.point) : routing::format_range(s.range)) + " from " + s.source.name;
  ctx.note("operation " + id + ": " + std::string(journal::to_text(plan.kind)) + " of map " + plan.map.name + " moving " + what + " to " +
           plan.target.name + " in " + std::to_string(plan.batches.size()) + " batch(es)");
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
  // Verify and purge overlap (a batch is verified while the one before is purged): the
  // overlap is named, so the phases add up to the wall time.
  char times[240];
  std::snprintf(times, sizeof times,
                "time: copy %.2f s (%.1f MB), verify %.2f s (beside purge %.2f s), purge %.2f s, catalog %.2f s",
                last.copy_seconds, static_cast<double>(last.bytes) / 1e6, last.verify_seconds, last.verify_beside_seconds,
                last.purge_seconds, last.catalog_seconds);
  if (!last.path.empty()) ctx.verbose("path: " + last.path);
  if (!last.read.empty()) ctx.verbose("read: " + last.read);
  if (!last.verify.empty()) ctx.verbose("verify: " + last.verify);
  ctx.verbose(times);
  if (last.cutovers + last.cutovers_given_up + last.cutovers_deferred > 0) {
    char cut[200];
    std::snprintf(cut, sizeof cut, "cut-overs: %d, given up %d, deferred %d, longest held writers %.0f ms", last.cutovers,
                  last.cutovers_given_up, last.cutovers_deferred, last.longest_cutover_ms);
    ctx.verbose(cut);
    if (!last.last_give_up.empty()) ctx.verbose("the last cut-over given up: " + last.last_give_up);
  }
  if (ctx.json()) return ctx.print_json(journal::to_json(status));
  ctx.out() << "operation " << status.id << " " << status.status << ": " << status.rows_moved << " rows in "
            << status.batches_done << " batch(es) moved to " << status.target << '\n';
}

}  // namespace shardctl::apps
