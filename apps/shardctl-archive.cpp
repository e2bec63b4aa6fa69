// shardctl archive: move cold rows (and, with --cascade, every row referencing them) from every
// shard to an archive database or a directory of zstd COPY files; list jobs, show runs, restore.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "archive/archiver.hpp"
#include "archive/restore.hpp"
#include "catalog/names.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "output/table.hpp"

using namespace shardctl;

namespace {

std::optional<std::chrono::milliseconds> duration_option(const std::optional<std::string>& text, const char* option) {
  if (!text) return std::nullopt;
  auto d = config::parse_duration(*text);
  if (!d) throw usage_error(std::string(option) + " '" + *text + "' is not a duration", "write e.g. 500ms, 30s, 10m, 2h or 7d");
  return d;
}

// The run's progress on a terminal: one line on stderr, rewritten after each batch.
class ProgressLine {
 public:
  ProgressLine(std::string job, bool tty) : job_(std::move(job)), tty_(tty) {}
  void add(std::int64_t rows) {
    rows_ += rows;
    ++batches_;
    if (!tty_) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    char line[160];
    std::snprintf(line, sizeof line, "\rarchive %s: %lld rows in %lld batch(es), %.0f rows/s   ", job_.c_str(),
                  static_cast<long long>(rows_), static_cast<long long>(batches_), s > 0 ? static_cast<double>(rows_) / s : 0.0);
    std::cerr << line << std::flush;
  }
  void end() const {
    if (tty_) std::cerr << '\n';
  }

 private:
  std::string job_;
  bool tty_;
  std::int64_t rows_ = 0, batches_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// `archive run`: a configured job, or an ad hoc one from --table, --where and --to.
struct RunCommand {
  std::optional<std::string> job_name, table, where, to, name, max_runtime, sleep, max_lag;
  bool cascade = false;
  std::optional<std::int64_t> batch_size;
  std::optional<int> parallel;

  void define(cli::Family& fam) {
    auto* run = fam.command("run", "Run a configured job, or an ad hoc one given by --table, --where and --to",
                            [this](cli::Context& ctx) { execute(ctx); });
    run->add_option("JOB", job_name, "A job of the configuration ([[archive.job]] name)");
    run->add_option("--table", table, "Root table of an ad hoc job ([schema.]table)")->type_name("TABLE");
    run->add_option("--where", where, "Which root rows are cold: an SQL condition on the root table's columns")->type_name("SQL");
    run->add_option("--to", to, "Destination: dir:PATH or postgres:DSN")->type_name("DEST");
    run->add_flag("--cascade", cascade, "Archive every row that references an archived row, to any depth, with it");
    run->add_option("--name", name, "Name of an ad hoc job (default table:TABLE)")->type_name("NAME");
    run->add_option("--batch-size", batch_size, "Root rows per batch (default: the job's, else [defaults] batch_size)")
        ->type_name("N");
    run->add_option("--parallel", parallel, "Shards archived at once (default: [defaults] parallel)")
        ->check(cli::whole_number(1))
        ->type_name("N");
    run->add_option("--max-runtime", max_runtime, "Stop cleanly after the batch that passes this; the next run continues")
        ->type_name("DURATION");
    run->add_option("--sleep", sleep, "Pause between batches")->type_name("DURATION");
    run->add_option("--max-lag", max_lag, "Pause while a streaming replica of the shard replays further behind")
        ->type_name("DURATION");
  }

  archive::Job job(const config::Config& cfg) const {
    archive::Job job;
    if (job_name) {
      if (table || where || to || cascade)
        throw usage_error("give a configured JOB or --table/--where/--to, not both");
      auto it = std::find_if(cfg.archive_jobs.begin(), cfg.archive_jobs.end(), [&](const auto& j) { return j.name == *job_name; });
      if (it == cfg.archive_jobs.end())
        throw usage_error("no archive job '" + *job_name + "' in the configuration", "`shardctl archive list` shows the jobs");
      job = archive::job_from_config(*it, cfg.batch_size);
    } else {
      if (!table || !where || !to) throw usage_error("archive run needs a JOB, or --table, --where and --to");
      job.table = catalog::qualify_table(*table);
      job.where = *where;
      job.cascade = cascade;
      job.to = archive::parse_destination(*to);
      job.batch_size = cfg.batch_size;
      job.name = name ? *name : archive::adhoc_job_name(job.table);
    }
    if (batch_size) job.batch_size = *batch_size;
    if (job.batch_size < 1) throw usage_error("--batch-size must be at least 1");
    return job;
  }

  void execute(cli::Context& ctx) const {
    auto job = this->job(ctx.config());
    archive::RunOptions opt;
    opt.parallel = ctx.parallel(parallel);
    opt.max_runtime = duration_option(max_runtime, "--max-runtime");
    opt.sleep = duration_option(sleep, "--sleep");
    opt.max_lag = duration_option(max_lag, "--max-lag");
    archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
    if (ctx.dry_run()) return preview(ctx, archiver, job);
    ProgressLine progress(job.name, isatty(STDERR_FILENO) && !ctx.options().quiet);
    opt.on_batch = [&](const std::string&, std::int64_t n) { progress.add(n); };
    opt.on_note = [&](const std::string& line) { ctx.note(line); };
    opt.on_warning = [&](const std::string& line) { ctx.warn(line); };
    auto r = archiver.run(job, opt);
    progress.end();
    for (const auto& s : r.shards)
      if (s.refused)
        ctx.warn(s.shard + ": " + std::to_string(s.refused) + " row(s) of " + job.table +
                 " stayed because rows still reference them (use --cascade to archive them together)");
    if (ctx.json()) return ctx.print_json(archive::to_json(r));
    std::int64_t total = 0;
    for (const auto& s : r.shards) total += archive::total_rows(s.rows);
    ctx.out() << "archive run " << r.op.id << " " << r.op.status << ": " << total << " rows to " << r.job.to.describe() << '\n';
    if (r.op.status == journal::OperationStatus::paused)
      ctx.out() << "stopped by --max-runtime; `shardctl archive run " << (job_name ? *job_name : "...")
                << "` continues it\n";
  }

  // --dry-run: what each shard would give, read-only.
  static void preview(cli::Context& ctx, archive::Archiver& archiver, const archive::Job& job) {
    auto p = archiver.preview(job);
    for (const auto& n : p.notes) ctx.warn(n);
    if (ctx.json()) return ctx.print_json(archive::to_json(p));
    ctx.out() << "would archive rows of " << job.table << " where " << job.where
              << (job.cascade ? ", with every row that references them," : "") << " to " << job.to.describe() << '\n';
    if (p.continues) ctx.out() << "continuing the unfinished run " << *p.continues << " of job " << job.name << '\n';
    output::TextTable t({"SHARD", "TABLE", "ROWS", "FIRST KEY", "LAST KEY"});
    for (const auto& s : p.shards)
      for (std::size_t i = 0; i < s.rows.size(); ++i)
        t.add_row({s.shard, s.rows[i].first, std::to_string(s.rows[i].second), i ? "" : archive::keys_text(s.first_key),
                   i ? "" : archive::keys_text(s.last_key)});
    t.print(ctx.out());
    for (const auto& s : p.shards)
      if (s.refused)
        ctx.out() << s.shard << ": " << s.refused << " row(s) stay: rows still reference them (use --cascade to take them along)\n";
    for (const auto& s : p.skipped) ctx.out() << "skipped shard " << s << '\n';
  }
};

void define_list(cli::Family& fam) {
  fam.command("list", "List the configured jobs with their last run", [](cli::Context& ctx) {
    archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
    nlohmann::json arr = nlohmann::json::array();
    output::TextTable t({"JOB", "TABLE", "TO", "LAST RUN", "STATUS", "ROWS", "UPDATED"});
    for (const auto& entry : ctx.config().archive_jobs) {
      auto job = archive::job_from_config(entry, ctx.config().batch_size);
      auto runs = archiver.runs_of(job.name);
      nlohmann::json last = nullptr;
      if (!runs.empty()) {
        const auto& o = runs.front();
        last = {{"id", o.id}, {"status", std::string(journal::to_text(o.status))}, {"rows", o.rows_moved}, {"updated_at", o.updated_at}};
        t.add_row({job.name, job.table, job.to.describe(), o.id, std::string(journal::to_text(o.status)), std::to_string(o.rows_moved), o.updated_at});
      } else {
        t.add_row({job.name, job.table, job.to.describe(), "-", "never run", "0", "-"});
      }
      arr.push_back({{"job", job.name}, {"table", job.table}, {"where", job.where}, {"cascade", job.cascade},
                     {"to", job.to.describe()}, {"batch_size", job.batch_size}, {"runs", runs.size()}, {"last_run", last}});
    }
    if (ctx.json()) return ctx.print_json({{"jobs", arr}});
    t.print(ctx.out());
  });
}

struct ShowCommand {
  std::string id;
  void define(cli::Family& fam) {
    fam.command("show", "Show an archive run's progress per shard", [this](cli::Context& ctx) {
      archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
      auto r = archiver.report(id);
      if (ctx.json()) return ctx.print_json(archive::to_json(r));
      archive::print_run(ctx.out(), r);
    })->add_option("ID", id, "Archive run id (an operation id)")->required();
  }
};

struct RestoreCommand {
  std::string id;
  std::optional<std::string> where;
  void define(cli::Family& fam) {
    auto* restore = fam.command("restore", "Put archived rows back on the shards the map routes them to now",
                                [this](cli::Context& ctx) {
      archive::Restorer restorer(ctx.catalog());
      auto r = restorer.restore(id, where, ctx.dry_run());
      if (ctx.json()) return ctx.print_json(archive::to_json(r));
      archive::print_restore(ctx.out(), r, ctx.dry_run());
    });
    restore->add_option("RUN", id, "Archive run id")->required();
    restore->add_option("--where", where, "Restore only root rows matching this SQL condition (and their children)")
        ->type_name("SQL");
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("archive", "Archive cold rows from every shard, verified and resumable; list jobs, show runs, restore");
  RunCommand run;
  run.define(fam);
  define_list(fam);
  ShowCommand show;
  show.define(fam);
  RestoreCommand restore;
  restore.define(fam);
  return fam.main(argc, argv);
}
