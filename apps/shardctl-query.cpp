// shardctl query: one read-only statement on every shard (or a map's, or the named ones), in
// parallel, as the [query] user, streamed back as one result with a leading `shard` column;
// exit 3 when a shard failed and the result is partial, 64 when a shard refused the statement
// or the role.
#include <iostream>
#include <iterator>

#include "catalog/catalog.hpp"
#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"
#include "query/query.hpp"
#include "query/render.hpp"

using namespace shardctl;

namespace {

std::unique_ptr<query::Sink> sink_for(cli::Context& ctx) {
  switch (ctx.format()) {
    case cli::Format::json: return query::json_sink(ctx.out());
    case cli::Format::csv: return query::csv_sink(ctx.out());
    case cli::Format::nagios:  // not allowed here: the parser refused it
    case cli::Format::text: break;
  }
  return query::text_sink(ctx.out());
}

// A partial result says so on stderr, naming the failed shards, and exits 3.
void report_partial(cli::Context& ctx, const query::Summary& summary) {
  if (!summary.partial()) return;
  std::string names;
  for (const auto& s : summary.shards)
    if (!s.outcome.ok()) {
      if (!names.empty()) names += ", ";
      names += s.outcome.shard;
    }
  std::cerr << "shardctl query: partial result: " << summary.failed() << " of " << summary.shards.size()
            << " shard(s) failed: " << names << '\n';
  ctx.set_exit_status(3);
}

// The one command of the family: its options, and the run.
struct QueryCommand {
  std::string sql;
  std::optional<std::string> map, shards, timeout;
  std::optional<int> parallel;
  int connect_timeout = 5;
  std::optional<std::int64_t> limit;
  bool allow_privileged = false;

  void define(cli::App& app) {
    app.add_option("SQL", sql, "The statement (one; `-` reads it from stdin)")->required();
    app.add_option("--map", map, "Only the shards this map routes to")->type_name("MAP");
    app.add_option("--shards", shards, "Only these shards (comma-separated names)")->type_name("LIST");
    app.add_option("--parallel", parallel, "Shards queried at once (default: [defaults] parallel)")
        ->check(cli::whole_number(1))
        ->type_name("N");
    app.add_option("--timeout", timeout, "statement_timeout on each shard (default 30s)")->type_name("DURATION");
    app.add_option("--connect-timeout", connect_timeout, "Seconds to wait for each shard's connection (default 5)")
        ->check(cli::whole_number(1))
        ->type_name("SECONDS");
    app.add_option("--limit", limit, "At most N rows from each shard")->check(cli::whole_number(0))->type_name("N");
    app.add_flag("--allow-privileged", allow_privileged,
                 "Run even when the login role can do more than read (superuser, REPLICATION, server files, signals)");
  }

  query::Options options(cli::Context& ctx) const {
    query::Options opt;
    opt.sql = sql;
    if (sql == "-") opt.sql.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    opt.selection.map = map;
    if (shards) opt.selection.shards = fanout::split_shard_list(*shards);
    opt.parallel = ctx.parallel(parallel);
    if (timeout) {
      auto d = config::parse_duration(*timeout);
      if (!d || d->count() <= 0) throw usage_error("--timeout '" + *timeout + "' is not a duration", "write e.g. 500ms, 30s or 5m");
      opt.timeout = *d;
    }
    opt.connect_timeout = connect_timeout;
    opt.limit = limit;
    opt.user = ctx.config().query.user;
    opt.allow_privileged = allow_privileged;
    return opt;
  }

  void run(cli::Context& ctx) const {
    auto opt = options(ctx);
    auto sink = sink_for(ctx);
    catalog::Store store(ctx.catalog());
    // Failed shards are named on stderr as they finish, whatever the format: stdout holds rows.
    auto summary = query::run(store, opt, *sink, [&](const query::ShardResult& r) {
      if (r.outcome.ok()) {
        if (r.limited) ctx.verbose("shard " + r.outcome.shard + ": stopped at --limit " + std::to_string(*opt.limit));
        return;
      }
      std::cerr << "shardctl query: shard " << r.outcome.shard << ' ' << to_text(r.outcome.state) << ": "
                << r.outcome.error << '\n';
    });
    for (const auto& s : summary.offline) ctx.note("shard " + s + " is offline: left out (name it in --shards to query it)");
    report_partial(ctx, summary);
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("query", "Run a read-only statement on every shard and stream one result with a shard column");
  fam.allow_formats({"csv"});
  QueryCommand command;
  command.define(fam.app());
  fam.root_handler([&](cli::Context& ctx) { command.run(ctx); });
  return fam.main(argc, argv);
}
