#include "query/query.hpp"

#include <mutex>
#include <unordered_map>

#include "core/error.hpp"
#include "query/shard_reader.hpp"
#include "query/statement.hpp"

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

Summary run(catalog::Store& store, const Options& options, Sink& sink, const std::function<void(const ShardResult&)>& on_done) {
  // What can be refused from the text alone is, before any shard is asked.
  Options opts = options;
  opts.sql = statement_text(options.sql);
  read_shape(opts.sql);
  if (options.limit && *options.limit < 0) throw usage_error("--limit must be 0 or more");
  auto targets = fanout::select_targets(store, options.selection);
  Summary summary;
  summary.offline = targets.offline;
  summary.shards.resize(targets.run.size());
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < targets.run.size(); ++i) {
    index[targets.run[i].shard] = i;
    summary.shards[i].outcome.shard = targets.run[i].shard;
  }

  // The first shard to describe its result sets the columns (and the header already written);
  // a shard whose columns differ in name or type fails, its rows would not fit under them.
  std::mutex mutex;
  bool have_columns = false;
  std::string columns_from;
  auto work = [&](const fanout::Target& t) {
    ShardResult& result = summary.shards[index.at(t.shard)];
    ReadHooks hooks;
    hooks.columns = [&](const std::vector<Column>& columns) {
      std::lock_guard lock(mutex);
      if (!have_columns) {
        have_columns = true;
        columns_from = t.shard;
        summary.columns = columns;
        sink.begin(columns);
        return;
      }
      bool same = columns.size() == summary.columns.size();
      for (std::size_t i = 0; same && i < columns.size(); ++i)
        same = columns[i].name == summary.columns[i].name && columns[i].type == summary.columns[i].type;
      if (!same)
        throw data_error("its columns (" + describe_columns(columns) + ") differ from those of shard " + columns_from + " (" +
                         describe_columns(summary.columns) + ")");
    };
    hooks.row = [&](const std::vector<Cell>& cells) {
      std::lock_guard lock(mutex);
      sink.row(t.shard, cells);
    };
    hooks.stop = [&] {
      std::lock_guard lock(mutex);
      return sink.closed();
    };
    try {
      read_shard(t, opts, hooks, result);
    } catch (const Refusal&) {
      result.refused = true;
      throw;
    }
  };
  auto done = [&](const fanout::Target& t, const fanout::Outcome& o) {
    ShardResult& result = summary.shards[index.at(t.shard)];
    result.outcome = o;
    if (on_done && !result.refused) {
      std::lock_guard lock(mutex);
      on_done(result);
    }
  };
  fanout::run(targets.run, {options.parallel, false}, work, done);
  // A refusal is the same on every shard it comes from, and it is the operator's to fix: one
  // usage error, after the rows of any shard that did run (a role that can do more than read
  // on some servers only). No rows: nothing is written at all.
  const fanout::Outcome* refusal = nullptr;
  for (const auto& s : summary.shards)
    if (!refusal && s.refused) refusal = &s.outcome;
  if (refusal && !have_columns) throw usage_error(refusal->error, refusal->hint);
  sink.finish(summary);
  if (refusal) throw usage_error(refusal->error, refusal->hint);
  return summary;
}

}  // namespace shardctl::query
