// shardctl op: list, inspect, resume, cancel and wait for migration operations.
#include <unistd.h>

#include <chrono>
#include <thread>

#include "archive/archiver.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "migrate/leftover_streams.hpp"
#include "migrate/operation.hpp"
#include "migrate/render.hpp"
#include "output/table.hpp"
#include "run_operation.hpp"
#include "journal/journal.hpp"
#include "shardside/replication.hpp"

using namespace shardctl;

namespace {

// Archive runs are operations too; their runner lives in lib/archive.
bool is_archive_run(cli::Context& ctx, const std::string& id) {
  return journal::operation_status(ctx.catalog(), id).kind == archive::run_kind;
}

archive::RunOptions archive_options(cli::Context& ctx) {
  archive::RunOptions opt;
  opt.parallel = ctx.parallel(std::nullopt);
  opt.on_note = [&ctx](const std::string& line) { ctx.note(line); };
  return opt;
}

void print_archive_result(cli::Context& ctx, const archive::RunReport& r) {
  if (ctx.json()) return ctx.print_json(archive::to_json(r));
  std::int64_t rows = 0;
  for (const auto& s : r.shards) rows += archive::total_rows(s.rows);
  ctx.out() << "archive run " << r.op.id << " " << r.op.status << ": " << rows << " rows to " << r.job.to.describe() << '\n';
}

void list_operations(cli::Context& ctx) {
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto ops = engine.list();
  if (ctx.json()) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& o : ops) arr.push_back(journal::to_json(o));
    return ctx.print_json({{"operations", arr}});
  }
  output::TextTable t({"ID", "KIND", "MAP", "RANGE", "FROM", "TO", "STATUS", "BATCHES"});
  for (const auto& o : ops)
    t.add_row({o.id, std::string(journal::to_text(o.kind)), o.map, o.range, o.source, o.target, std::string(journal::to_text(o.status)),
               std::to_string(o.batches_done) + "/" + std::to_string(o.batches)});
  t.print(ctx.out());
}

void show_operation(cli::Context& ctx, const std::string& id) {
  if (is_archive_run(ctx, id)) {
    archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
    auto r = archiver.report(id);
    if (ctx.json()) return ctx.print_json(archive::to_json(r));
    return archive::print_run(ctx.out(), r);
  }
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto o = engine.status(id);
  if (ctx.json()) return ctx.print_json(journal::to_json(o));
  migrate::print_status(ctx.out(), o);
}

void resume_archive_run(cli::Context& ctx, const std::string& id) {
  archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
  if (ctx.dry_run()) {
    auto o = journal::operation_status(ctx.catalog(), id);
    if (o.status == journal::OperationStatus::running) throw journal::run_by_another(o);
    return print_archive_result(ctx, archiver.report(id));
  }
  print_archive_result(ctx, archiver.resume(id, archive_options(ctx)));
}

void resume_operation(cli::Context& ctx, const std::string& id, const apps::OnlineFlags& online) {
  if (is_archive_run(ctx, id)) {
    if (online.max_lag || online.cutover_timeout)
      throw usage_error("operation " + id + " is an archive run: --max-lag and --cutover-timeout apply to online moves only");
    return resume_archive_run(ctx, id);
  }
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto max_lag = online.max_lag_seconds();
  auto cutover = online.cutover_timeout_ms();
  if (ctx.dry_run()) {
    auto o = engine.preview_run(id);
    if (ctx.json()) return ctx.print_json(journal::to_json(o));
    migrate::print_status(ctx.out(), o);
    return;
  }
  engine.retune_online(id, max_lag, cutover);
  auto o = engine.run(id);
  if (ctx.json()) return ctx.print_json(journal::to_json(o));
  ctx.out() << "operation " << o.id << " " << o.status << ": " << o.batches_done << "/" << o.batches << " batch(es), "
            << o.rows_moved << " rows\n";
}

void print_cancel_requested(cli::Context& ctx) {
  ctx.out() << "cancellation requested: the running process stops after its current batch\n";
}

// An operation that is over (or that the catalog does not know) is not cancelled again, but
// replication objects named after it may still be on shards (`shardctl check` reports them):
// cancel drops them. A live operation's own are its runner's business.
void cancel_leftovers(cli::Context& ctx, const std::string& id, const std::optional<journal::OpStatus>& op) {
  auto found = migrate::drop_leftover_streams(ctx.catalog(), id, ctx.dry_run());
  if (!op && found.empty()) throw usage_error("no operation " + id, "`shardctl op list` shows the operations");
  if (ctx.json()) {
    nlohmann::json doc = op ? journal::to_json(*op) : nlohmann::json{{"id", id}, {"status", nullptr}};
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& f : found)
      arr.push_back({{"shard", f.shard}, {"kind", shardside::to_text(f.object.kind)}, {"name", f.object.name}});
    doc["dry_run"] = ctx.dry_run();
    doc["replication_objects_dropped"] = arr;
    return ctx.print_json(doc);
  }
  if (op) ctx.out() << "operation " << op->id << " is already " << op->status << '\n';
  else ctx.out() << "no operation " << id << " in the catalog, but replication objects are named after it\n";
  for (const auto& f : found)
    ctx.out() << (ctx.dry_run() ? "would drop " : "dropped ") << shardside::to_text(f.object.kind) << ' ' << f.object.name
              << " on " << f.shard << '\n';
}

void cancel_operation(cli::Context& ctx, const std::string& id) {
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto op = journal::find_operation(ctx.catalog(), id);
  if (!op || journal::is_over(op->status)) return cancel_leftovers(ctx, id, op);
  if (ctx.dry_run()) {
    engine.check_cancellable(id);
    auto o = engine.status(id);
    if (ctx.json()) return ctx.print_json(journal::to_json(o));
    ctx.out() << "would request cancellation of operation " << o.id << " (" << o.status << ")\n";
    return;
  }
  engine.request_cancel(id);
  // With no live runner, finish the cancellation here: complete the batch in flight, if any,
  // and end the run (a migration leaves the rest on the source). With one, it stops itself.
  try {
    if (is_archive_run(ctx, id)) {
      archive::Archiver archiver(ctx.catalog(), ctx.catalog_dsn());
      return print_archive_result(ctx, archiver.resume(id, archive_options(ctx)));
    }
    auto o = engine.run(id);
    if (ctx.json()) return ctx.print_json(journal::to_json(o));
    ctx.out() << "operation " << o.id << " " << o.status << ": " << o.batches_done << "/" << o.batches
              << " batch(es) moved, the rest stays on " << o.source << '\n';
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::locked) throw;
    print_cancel_requested(ctx);
  }
}

void unfence_operation(cli::Context& ctx, const std::string& id) {
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto lifted = engine.unfence(id, ctx.dry_run());
  if (ctx.json()) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& u : lifted) arr.push_back({{"shard", u.shard}, {"fences", u.ranges}});
    return ctx.print_json({{"id", id}, {"dry_run", ctx.dry_run()}, {"shards", arr}});
  }
  for (const auto& u : lifted)
    ctx.out() << (ctx.dry_run() ? "would lift " : "lifted ") << u.ranges << " fence(s) of operation " << id << " on "
              << u.shard << '\n';
  if (lifted.empty()) ctx.out() << "operation " << id << " left no fences\n";
}

// Waits until the operation is over; a state it cannot leave by itself ends the wait with its error.
void wait_for_operation(cli::Context& ctx, const std::string& id, int timeout) {
  migrate::Engine engine(ctx.catalog(), apps::engine_options(ctx));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  for (;;) {
    auto o = engine.status(id);
    if (journal::is_over(o.status)) {
      if (ctx.json()) return ctx.print_json(journal::to_json(o));
      ctx.out() << "operation " << o.id << " " << o.status << '\n';
      return;
    }
    if (o.status == journal::OperationStatus::failed)
      throw internal_error("operation " + o.id + " failed: " + o.error, "`shardctl op resume " + o.id + "` continues it");
    if (o.status == journal::OperationStatus::paused)
      throw unavailable_error("operation " + o.id + " paused at its --max-runtime",
                              "`shardctl op resume " + o.id + "` (or the job's next run) continues it");
    if (o.status == journal::OperationStatus::interrupted)
      throw unavailable_error("operation " + o.id + " was interrupted: no process is running it",
                              "`shardctl op resume " + o.id + "` finishes it");
    if (std::chrono::steady_clock::now() > deadline)
      throw locked_error("operation " + o.id + " is still " + std::string(journal::to_text(o.status)) + " after " + std::to_string(timeout) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("op", "List, inspect, resume, cancel and wait for operations");
  std::string id;
  int timeout = 3600;
  auto with_id = [&id](void (*action)(cli::Context&, const std::string&)) {
    return [&id, action](cli::Context& ctx) { action(ctx, id); };
  };
  fam.command("list", "List operations, newest first", list_operations);
  fam.command("show", "Show one operation", with_id(show_operation))->add_option("ID", id, "Operation id")->required();
  apps::OnlineFlags online;
  auto* resume = fam.command("resume", "Finish an interrupted operation",
                             [&](cli::Context& ctx) { resume_operation(ctx, id, online); });
  resume->add_option("ID", id, "Operation id")->required();
  online.add_settings_to(*resume, "An online move: its --max-lag from now on (journaled for later resumes too)",
                         "An online move: its --cutover-timeout from now on (journaled for later resumes too)");
  fam.command("cancel", "Stop an operation after its current batch; of one that is over, drop what it left on shards",
              with_id(cancel_operation))
      ->add_option("ID", id, "Operation id")
      ->required();
  fam.command("unfence", "Lift the fences a finished operation left on its source shards", with_id(unfence_operation))
      ->add_option("ID", id, "Operation id")
      ->required();
  auto* wait = fam.command("wait", "Wait until an operation is done, cancelled or failed",
                           [&](cli::Context& ctx) { wait_for_operation(ctx, id, timeout); });
  wait->add_option("ID", id, "Operation id")->required();
  wait->add_option("--timeout", timeout, "Give up after this many seconds (exit 75)")->type_name("SECONDS");
  return fam.main(argc, argv);
}
