#include "query/query.hpp"

#include <mutex>
#include <unordered_map>

#include "core/error.hpp"
#include "query/shard_reader.hpp"
#include "query/statement.hpp"
#include "shardio/server_pool.hpp"

namespace shardctl::query {

bool Summary::partial() const noexcept { return failed() > 0; }

std::size_t Summary::failed() const noexcept {
  std::size_t n = 0;
  for (const auto& s : shards) n += s.outcome.ok() ? 0 : 1;
  return n;
}

std::string describe_columns(const std::vector<Column>& columns) {
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
    out += ' ';
    out += c.type;
  }
  return out.empty() ? "no columns" : out;
}

namespace {

// What can be refused from the text alone is, before any shard is asked.
Options checked_options(const Options& options) {
  Options opts = options;
  opts.sql = statement_text(options.sql);
  read_shape(opts.sql);
  if (options.limit && *options.limit < 0) throw usage_error("--limit must be 0 or more");
  return opts;
}

// The shards read at once into one sink: each shard's rows under the one header, its result in
// the summary (in shard-name order, as `targets` are).
class QueryRun {
 public:
  QueryRun(const fanout::Targets& targets, const Options& options, Sink& sink,
           const std::function<void(const ShardResult&)>& on_done)
      : options_(options), sink_(sink), on_done_(on_done), pool_(options.parallel) {
    summary_.offline = targets.offline;
    summary_.shards.resize(targets.run.size());
    for (std::size_t i = 0; i < targets.run.size(); ++i) {
      index_[targets.run[i].shard] = i;
      summary_.shards[i].outcome.shard = targets.run[i].shard;
    }
  }

  // One shard's part (on its own thread): the statement's rows, through the shared sink.
  void read(const fanout::Target& t) {
    ShardResult& result = result_of(t.shard);
    ReadHooks hooks;
    hooks.columns = [&](const std::vector<Column>& columns) { set_columns(t.shard, columns); };
    hooks.row = [&](const std::vector<Cell>& cells) {
      std::lock_guard lock(mutex_);
      sink_.row(t.shard, cells);
    };
    hooks.stop = [&] {
      std::lock_guard lock(mutex_);
      return sink_.closed();
    };
    try {
      read_shard(t, options_, hooks, result, pool_, checks_);
    } catch (const Refusal&) {
      result.refused = true;
      throw;
    }
  }

  void done(const fanout::Target& t, const fanout::Outcome& o) {
    ShardResult& result = result_of(t.shard);
    result.outcome = o;
    if (on_done_ && !result.refused) {
      std::lock_guard lock(mutex_);
      on_done_(result);
    }
  }

  // A refusal is the same on every shard it comes from, and it is the operator's to fix: one
  // usage error, after the rows of any shard that did run (a role that can do more than read
  // on some servers only). No rows: nothing is written at all.
  Summary finish() {
    const fanout::Outcome* refusal = nullptr;
    for (const auto& s : summary_.shards)
      if (!refusal && s.refused) refusal = &s.outcome;
    if (refusal && !have_columns_) throw usage_error(refusal->error, refusal->hint);
    sink_.finish(summary_);
    if (refusal) throw usage_error(refusal->error, refusal->hint);
    return summary_;
  }

 private:
  ShardResult& result_of(const std::string& shard) { return summary_.shards[index_.at(shard)]; }

  // The first shard to describe its result sets the columns (and the header already written);
  // a shard whose columns differ in name or type fails, its rows would not fit under them.
  void set_columns(const std::string& shard, const std::vector<Column>& columns) {
    std::lock_guard lock(mutex_);
    if (!have_columns_) {
      have_columns_ = true;
      columns_from_ = shard;
      summary_.columns = columns;
      sink_.begin(columns);
      return;
    }
    bool same = columns.size() == summary_.columns.size();
    for (std::size_t i = 0; same && i < columns.size(); ++i)
      same = columns[i].name == summary_.columns[i].name && columns[i].type == summary_.columns[i].type;
    if (!same)
      throw data_error("its columns (" + describe_columns(columns) + ") differ from those of shard " + columns_from_ + " (" +
                       describe_columns(summary_.columns) + ")");
  }

  const Options& options_;
  Sink& sink_;
  const std::function<void(const ShardResult&)>& on_done_;
  Summary summary_;
  std::unordered_map<std::string, std::size_t> index_;
  shardio::ServerPool pool_;  // the shards' connections: at most --parallel per server
  RunChecks checks_;
  std::mutex mutex_;  // guards the sink, the columns and on_done
  bool have_columns_ = false;
  std::string columns_from_;
};

}  // namespace

Summary run(catalog::Store& store, const Options& options, Sink& sink, const std::function<void(const ShardResult&)>& on_done) {
  Options opts = checked_options(options);
  auto targets = fanout::select_targets(store, options.selection);
  QueryRun query(targets, opts, sink, on_done);
  fanout::run(
      targets.run, {options.parallel, false}, [&](const fanout::Target& t) { query.read(t); },
      [&](const fanout::Target& t, const fanout::Outcome& o) { query.done(t, o); });
  return query.finish();
}

}  // namespace shardctl::query
