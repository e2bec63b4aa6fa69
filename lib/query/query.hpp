// shardctl query: one read-only statement on many shards at once, the rows of all of them
// streamed as one result with a leading `shard` column. Every shard runs it as a role that can
// only read (read_role.hpp), once the server has parsed it as a read (statement.hpp), in its
// own `BEGIN READ ONLY` transaction with a statement timeout, always rolled back. A shard that
// fails (error, timeout, columns unlike the others', unreachable) is that shard's outcome and the
// result is partial (exit 3), never a reason to hide the other shards' rows; a refusal (a
// statement that is no read, a role that can do more) is a usage error (64).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "fanout/fanout.hpp"

namespace shardctl::query {

struct Column {
  std::string name;
  std::string type;  // format_type(oid, NULL): "integer", "text", "public.mood"
  unsigned oid = 0;  // of the type, on the shard that set the columns (renderers use built-ins only)
};

// One row as it arrives: cells point into libpq's buffer and live until the call returns.
// A NULL is std::nullopt.
using Cell = std::optional<std::string_view>;

struct ShardResult {
  fanout::Outcome outcome;
  std::int64_t rows = 0;
  bool limited = false;  // --limit reached: the shard had more rows
  bool refused = false;  // the shard refused the statement or the role (outcome: failed, usage)
};

struct Summary {
  std::vector<Column> columns;  // empty when no shard described its result
  std::vector<ShardResult> shards;  // in shard-name order
  std::vector<std::string> offline;  // left out: the catalog marks them offline
  bool partial() const noexcept;
  std::size_t failed() const noexcept;
};

// Where the result goes. The runner never calls it twice at once (one shard's rows may
// interleave with another's, each row carries its shard).
class Sink {
 public:
  virtual ~Sink() = default;
  // Once, before the first row, with the statement's own columns (the shard column is not
  // among them).
  virtual void begin(const std::vector<Column>& columns) = 0;
  virtual void row(const std::string& shard, const std::vector<Cell>& cells) = 0;
  // Once, at the end (also when begin never came: no shard got that far).
  virtual void finish(const Summary& summary) = 0;
  // True when the output went away (closed pipe): the shards stop reading.
  virtual bool closed() const = 0;
};

struct Options {
  std::string sql;
  fanout::Selection selection;
  int parallel = 4;
  std::chrono::milliseconds timeout{30'000};  // statement_timeout on each shard
  int connect_timeout = 5;                    // seconds
  std::optional<std::int64_t> limit;          // rows per shard
  // The login role on every shard, in place of each DSN's user ([query] user). None: the DSN's.
  std::optional<std::string> user;
  bool allow_privileged = false;  // run even as a role that can do more than read
};

// Runs the statement on the selected shards and streams every row into `sink`. `on_done` is
// called as each shard finishes (stderr lines for failed shards), but not for a shard that
// refused to run it. Usage Error for an unknown map or shard, an empty statement, a statement
// that is no read or a negative limit before anything is sent; and after the run, when any
// shard refused the statement or the role (the first refusal; the sink is finished first if
// rows were written).
Summary run(catalog::Store& store, const Options& options, Sink& sink,
            const std::function<void(const ShardResult&)>& on_done = {});

// "a integer, b text": for messages about columns that differ.
std::string describe_columns(const std::vector<Column>& columns);

}  // namespace shardctl::query
