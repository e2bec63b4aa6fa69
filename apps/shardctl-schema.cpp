// shardctl schema: roll versioned migration files out to every shard (waves, canary, per-shard
// locks and history), show the shard x version matrix, adopt an existing fleet (baseline), and
// compare the shards' actual structure (drift, defined in schema_drift.hpp).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"
#include "fanout/fanout.hpp"
#include "output/junit.hpp"
#include "schema/files.hpp"
#include "schema/report.hpp"
#include "schema/rollout.hpp"
#include "schema_drift.hpp"

using namespace shardctl;

namespace {

std::chrono::milliseconds duration_option(const std::optional<std::string>& text, const char* option,
                                          std::chrono::milliseconds fallback) {
  if (!text) return fallback;
  if (*text == "0") return std::chrono::milliseconds(0);
  auto d = config::parse_duration(*text);
  if (!d) throw usage_error(std::string(option) + " '" + *text + "' is not a duration", "write e.g. 500ms, 30s, 10m, or 0 for none");
  return *d;
}

// Options several commands share; each command adds those it takes.
struct Shared {
  std::optional<std::string> map, shards, lock_timeout, statement_timeout, junit;
  std::optional<int> parallel;
  int connect_timeout = 5;

  std::vector<fanout::Target> targets(cli::Context& ctx) const {
    catalog::Store store(ctx.catalog(), catalog::Writes::preview);
    fanout::Selection sel;
    sel.map = map;
    if (shards) sel.shards = fanout::split_shard_list(*shards);
    auto t = fanout::select_targets(store, sel);
    for (const auto& s : t.offline) ctx.note("shard " + s + " is offline and left out (name it with --shards to include it)");
    if (t.run.empty()) throw usage_error("no shard to run on", "`shardctl shard list` shows the shards");
    return t.run;
  }
  int parallel_or(cli::Context& ctx) const { return ctx.parallel(parallel); }
  schema::RunSettings settings() const {
    schema::RunSettings s;
    s.lock_timeout = duration_option(lock_timeout, "--lock-timeout", std::chrono::seconds(10));
    s.statement_timeout = duration_option(statement_timeout, "--statement-timeout", std::chrono::milliseconds(0));
    s.connect_timeout = connect_timeout;
    return s;
  }
};

void add_selection(cli::App* cmd, Shared& o) {
  cmd->add_option("--map", o.map, "Only the shards this map has mappings on")->type_name("MAP");
  cmd->add_option("--shards", o.shards, "Only these shards (comma-separated)")->type_name("LIST");
  cmd->add_option("--parallel", o.parallel, "Shards worked on at once (default: [defaults] parallel)")
      ->check(cli::whole_number(1))
      ->type_name("N");
  cmd->add_option("--connect-timeout", o.connect_timeout, "Seconds to wait for each shard's connection (default 5)")
      ->check(cli::whole_number(1))
      ->type_name("SECONDS");
}

// A failure per shard is one line on stderr, as every shardctl error.
void print_shard_errors(const std::vector<schema::ShardReport>& shards) {
  for (const auto& s : shards) {
    if (s.error.empty() || s.ok()) continue;
    std::cerr << "shardctl schema: error: shard " << s.shard << " (" << s.state << "): " << s.error << '\n';
    if (!s.hint.empty()) std::cerr << "hint: " << s.hint << '\n';
    for (const auto& ix : s.invalid_indexes)
      std::cerr << "hint: drop the INVALID index " << ix.index << " before the next run: " << ix.drop_sql << '\n';
  }
}

// The options main() defines; each command runs as one member function.
struct Commands {
  Shared o;
  std::string dir;
  std::optional<std::string> status_dir, baseline_dir, version;
  int canary = 0;
  bool continue_on_error = false;
  std::optional<std::string> repair_dir, mark_applied, mark_failed;

  void apply(cli::Context& ctx) {
    auto migrations = schema::load_directory(dir);
    auto targets = o.targets(ctx);
    schema::ApplyOptions opt;
    opt.parallel = o.parallel_or(ctx);
    opt.canary = canary;
    opt.continue_on_error = continue_on_error;
    opt.dry_run = ctx.dry_run();
    opt.settings = o.settings();
    opt.settings.directory = dir;
    opt.on_shard = [&](const schema::ShardReport& r) { ctx.note(schema::progress_line(r)); };
    schema::ApplyResult r;
    try {
      r = schema::apply(targets, migrations, opt);
    } catch (const Error& e) {
      // CI still gets its report: one failed case saying why nothing ran.
      if (o.junit) output::write_junit(*o.junit, "shardctl schema apply", {{"shardctl.schema.apply", "plan", 0, e.what(), e.hint(), false}});
      throw;
    }
    if (o.junit && !ctx.dry_run()) output::write_junit(*o.junit, "shardctl schema apply", schema::junit_cases(r, migrations));
    print_shard_errors(r.shards);
    ctx.set_exit_status(r.exit_code);
    if (ctx.json()) return ctx.print_json(schema::to_json(r));
    schema::print_apply(ctx.out(), r);
  }

  void status(cli::Context& ctx) {
    std::optional<std::vector<schema::Migration>> migrations;
    if (status_dir) migrations = schema::load_directory(*status_dir);
    auto targets = o.targets(ctx);
    auto m = schema::status(targets, migrations, o.parallel_or(ctx), o.connect_timeout);
    if (o.junit) output::write_junit(*o.junit, "shardctl schema status", schema::junit_cases(m));
    ctx.set_exit_status(m.exit_code());
    if (ctx.json()) return ctx.print_json(schema::to_json(m));
    schema::print_status(ctx.out(), m);
  }

  void baseline(cli::Context& ctx) {
    auto v = schema::parse_version(*version);
    if (!v) throw usage_error("--version '" + *version + "' is not a version", "write e.g. --version 3 or --version 1.2");
    std::vector<schema::Migration> files;
    if (baseline_dir)
      for (auto& m : schema::load_directory(*baseline_dir))
        if (m.kind == schema::Kind::versioned && !(*v < *m.version)) files.push_back(std::move(m));
    auto targets = o.targets(ctx);
    auto r = schema::baseline(targets, *v, files, o.parallel_or(ctx), ctx.dry_run(), o.settings());
    print_shard_errors(r.shards);
    ctx.set_exit_status(r.exit_code);
    if (ctx.json()) return ctx.print_json(schema::to_json(r));
    schema::print_baseline(ctx.out(), r, ctx.dry_run());
  }

  void repair(cli::Context& ctx) {
    if (mark_applied.has_value() == mark_failed.has_value())
      throw usage_error("give one of --mark-applied FILE and --mark-failed FILE",
                        "--mark-applied if every statement of the file took effect, --mark-failed to run it again");
    auto mark = mark_applied ? schema::RepairMark::applied : schema::RepairMark::failed;
    // The file as history names it: its name in DIR (a path to it is taken by its name).
    std::string name = std::filesystem::path(mark_applied ? *mark_applied : *mark_failed).filename().string();
    auto migrations = schema::load_directory(*repair_dir);
    auto file = std::find_if(migrations.begin(), migrations.end(), [&](const schema::Migration& m) { return m.file == name; });
    if (file == migrations.end())
      throw usage_error("no migration file '" + printable(name) + "' in " + printable(*repair_dir),
                        "name the file as `shardctl schema apply` reported it, e.g. V3__add_index.sql");
    auto targets = o.targets(ctx);
    auto r = schema::repair(targets, *file, mark, o.parallel_or(ctx), ctx.dry_run(), o.settings());
    for (const auto& s : r.shards) {
      if (s.error.empty()) continue;
      std::cerr << "shardctl schema: error: shard " << s.shard << " (" << s.state << "): " << s.error << '\n';
      if (!s.hint.empty()) std::cerr << "hint: " << s.hint << '\n';
    }
    ctx.set_exit_status(r.exit_code);
    if (ctx.json()) return ctx.print_json(schema::to_json(r));
    schema::print_repair(ctx.out(), r);
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("schema", "Roll migration files out to every shard, show the shard x version matrix, baseline a fleet");
  Commands c;

  auto* apply = fam.command("apply", "Apply the migration files of DIR to every shard, in waves, and report per shard",
                            [&](cli::Context& ctx) { c.apply(ctx); });
  apply->add_option("DIR", c.dir, "Directory of V<version>__<name>.sql and R__<name>.sql files")->required()->type_name("DIR");
  add_selection(apply, c.o);
  apply->add_option("--canary", c.canary, "Apply to the first K shards first; stop there on any failure")
      ->check(cli::whole_number(0))
      ->type_name("K");
  apply->add_flag("--continue-on-error", c.continue_on_error,
                  "Keep starting shards after a failure (the default stops: no new shard starts)");
  apply->add_option("--lock-timeout", c.o.lock_timeout,
                    "Wait at most this long for a shard's rollout lock, and for each lock a migration needs (default 10s)")
      ->type_name("DURATION");
  apply->add_option("--statement-timeout", c.o.statement_timeout, "Cancel a migration statement running longer (default 0: none)")
      ->type_name("DURATION");
  apply->add_option("--junit", c.o.junit, "Also write a JUnit XML report: one test case per shard and migration")
      ->type_name("FILE");

  auto* status = fam.command("status", "Show the shard x version matrix, against DIR or between the shards",
                             [&](cli::Context& ctx) { c.status(ctx); });
  status->add_option("DIR", c.status_dir, "Directory of migration files (default: compare the shards with each other)")
      ->type_name("DIR");
  add_selection(status, c.o);
  status->add_option("--junit", c.o.junit, "Also write a JUnit XML report: one test case per shard and migration")
      ->type_name("FILE");

  auto* baseline = fam.command("baseline", "Record VERSION as applied on every shard without running anything",
                               [&](cli::Context& ctx) { c.baseline(ctx); });
  baseline->add_option("--version", c.version, "The version the shards are at")->required()->type_name("VERSION");
  baseline->add_option("DIR", c.baseline_dir, "Also record each V file of DIR up to VERSION with its checksum")->type_name("DIR");
  add_selection(baseline, c.o);
  baseline->add_option("--lock-timeout", c.o.lock_timeout, "Wait at most this long for a shard's rollout lock (default 10s)")
      ->type_name("DURATION");
  auto* repair = fam.command("repair", "Record what a file that never finished did on a shard: applied, or failed to run again",
                             [&](cli::Context& ctx) { c.repair(ctx); });
  repair->add_option("DIR", c.repair_dir, "Directory of the migration files")->required()->type_name("DIR");
  auto* applied_opt = repair->add_option("--mark-applied", c.mark_applied,
                                         "Record FILE as applied: every statement of it took effect")
                          ->type_name("FILE");
  repair->add_option("--mark-failed", c.mark_failed, "Record FILE as failed: the next apply runs it again")
      ->type_name("FILE")
      ->excludes(applied_opt);
  add_selection(repair, c.o);
  repair->add_option("--lock-timeout", c.o.lock_timeout, "Wait at most this long for a shard's rollout lock (default 10s)")
      ->type_name("DURATION");
  add_drift_command(fam);
  return fam.main(argc, argv);
}
