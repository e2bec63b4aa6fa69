// shardctl check: find orphaned cross-shard references, rows on the wrong shard and map
// inconsistencies; report them for people, scripts, Nagios and Prometheus; optionally fix.
#include <unistd.h>

#include <chrono>

#include "check/check.hpp"
#include "check/render.hpp"
#include "check/textfile.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"

using namespace shardctl;

namespace {

// The one command of the family: its options, and the run as the steps it takes.
struct CheckCommand {
  check::Options opt;
  bool restore = false;
  std::string fix = "report";
  std::optional<int> parallel, sample;
  std::optional<std::string> prometheus;

  void define(cli::App& app) {
    app.add_flag("--orphans", opt.orphans, "Child rows whose parent row is missing on the shard the map routes to");
    app.add_flag("--strays", opt.strays, "Rows stored on a shard the map does not route their key to");
    app.add_flag("--map-consistency", opt.map_consistency,
                 "Overlapping or unmapped key space, mappings to bad shards, offline mappings, left-over guards "
                 "and replication objects, expired leases, missing tables");
    app.add_flag("--references", opt.references,
                 "Every shard's copy of each reference table against the source of truth, chunk by chunk");
    app.add_option("--fix", fix, "What to do with bad rows (default report: change nothing)")
        ->check(cli::IsMember({"report", "quarantine", "delete", "rehome"}))
        ->type_name("report|quarantine|delete|rehome");
    app.add_flag("--restore", restore, "Put the rows --fix quarantine moved aside back into their tables");
    app.add_option("--sample", sample, "Example keys kept per finding (default: [check] sample, else 10)")
        ->check(cli::whole_number(0))
        ->type_name("N");
    app.add_option("--parallel", parallel, "Shards swept at once, one connection each (default: [defaults] parallel)")
        ->check(cli::whole_number(1))
        ->type_name("N");
    app.add_option("--batch-size", opt.probe_batch, "Child keys per cross-shard probe round trip; bad rows per fix transaction (default 5000)")
        ->check(cli::whole_number(1))
        ->type_name("N");
    app.add_option("--prometheus", prometheus, "Also write a node_exporter textfile-collector file (atomically)")
        ->type_name("FILE");
  }

  void run(cli::Context& ctx) {
    const auto& cfg = ctx.config();
    opt.parallel = ctx.parallel(parallel);
    opt.sample = sample ? *sample : static_cast<int>(cfg.check.sample);
    opt.fix = parse_word<check::FixMode>(fix);
    opt.dry_run = ctx.dry_run();
    auto report = restore ? restore_rows(ctx) : sweep(ctx);
    if (prometheus) {
      double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      check::write_file_atomically(*prometheus, check::prometheus_text(report, now));
    }
    switch (ctx.format()) {
      case cli::Format::json: ctx.print_json(check::to_json(report)); break;
      case cli::Format::nagios: ctx.out() << check::nagios_line(report) << '\n'; break;
      case cli::Format::csv:  // check does not allow csv; the parser refused it already
      case cli::Format::text: check::print_text(ctx.out(), report); break;
    }
    if (!restore) ctx.set_exit_status(check::exit_code_of(check::status_of(report)));
  }

  check::Report restore_rows(cli::Context& ctx) const {
    if (opt.orphans || opt.strays || opt.map_consistency || opt.references || opt.fix != check::FixMode::report)
      throw usage_error("--restore takes no kind flag and no --fix", "run `shardctl check --restore` on its own");
    return check::restore_quarantined(ctx.catalog(), opt);
  }

  check::Report sweep(cli::Context& ctx) {
    if (!opt.orphans && !opt.strays && !opt.map_consistency && !opt.references)
      opt.orphans = opt.strays = opt.map_consistency = opt.references = true;
    if (opt.fix == check::FixMode::remove && !opt.dry_run && !ctx.options().yes) confirm_delete(ctx);
    return check::run_check(ctx.catalog(), opt, ctx.config().check);
  }

  // Deleting rows cannot be undone: with nobody at a terminal to ask, refuse rather than
  // assume consent (unlike commands whose confirmation is a courtesy).
  static void confirm_delete(cli::Context& ctx) {
    if (!isatty(STDIN_FILENO))
      throw usage_error("--fix delete removes rows for good and nobody is at a terminal to confirm",
                        "pass --yes to delete without asking, or use --fix quarantine (restorable)");
    if (!ctx.confirm("delete every orphaned and stray row found, with the rows referencing them?"))
      throw usage_error("not confirmed; nothing was deleted");
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("check", "Find orphans, strays, map inconsistencies and differing reference copies across the fleet; optionally fix them");
  fam.allow_formats({"nagios"});
  CheckCommand command;
  command.define(fam.app());
  fam.root_handler([&](cli::Context& ctx) {
    try {
      command.run(ctx);
    } catch (const Error& e) {
      // Nagios shows stdout: even when the run itself fails (catalog down, bad flag in the
      // command definition), it gets one line saying why; the exit code stays the error's.
      if (ctx.format() == cli::Format::nagios) ctx.out() << "SHARDCTL UNKNOWN - " << check::one_line(e.what()) << '\n';
      throw;
    }
  });
  return fam.main(argc, argv);
}
