// Runner's verify step: each table of a batch on the target against the digest of the stream
// that loaded it. Where the columns allow, the target's server computes the value digest in one
// aggregate (shardio/value_digest.hpp); otherwise its rows are streamed back and hashed as the
// copy was. Reads run over the runner's ReadPool: tables, and parts of a big table's key range,
// at once with --parallel.
#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/copy_sql.hpp"
#include "migrate/read_parts.hpp"
#include "migrate/runner.hpp"
#include "migrate/server_digest.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

// Compares count and digest of every table's batch on both sides; returns them (JSON, table ->
// CopyDigest text) for the flip to journal and the purge to hold its deletes to. The source's
// side is the digest of the stream copy() loaded (read again only when a resumed run found the
// batch already copied); the target's side is its server's value digest, or its rows streamed
// back and hashed the same way.
std::string Runner::verify(const Batch& b) {
  // A process that lost its lease stops here: another runner may already have purged the batch,
  // and a failed comparison would only confuse.
  catalog_.read([&](pqxx::work& tx) { fence(tx); });
  shardio::RawConn& src = source(b);
  const auto& from = shard(b.source_id);
  std::vector<Digests> on_source;
  for (const auto& t : ctx_.tables) {
    auto it = streamed_.find(t.name);
    on_source.push_back(streamed_batch_ == b.no && it != streamed_.end() ? it->second
                                                                         : stream_digest(src, t, b.range, value_kinds(t, b)));
  }
  auto on_target = target_digests(b, on_source);
  nlohmann::json verified = nlohmann::json::object();
  nlohmann::json server = nlohmann::json::object();
  for (std::size_t i = 0; i < ctx_.tables.size(); ++i) {
    const auto& t = ctx_.tables[i];
    const auto& s = on_source[i].values.empty() ? on_source[i].stream : on_source[i].values;
    const auto& d = on_target[i];
    if (s != d) verification_failed(b, t, s, d, "nothing was deleted; the batch stays offline on " + from.name + " until resolved");
    // The purge holds its deletes to the stream's digest: every byte of the rows that left; and
    // where the source's server computes the value digest as shardctl did over the stream, to
    // that too, which it compares on the server, no deleted row sent (purge.cpp). It is the
    // digest the target's server just gave: no read more.
    verified[t.name] = on_source[i].stream;
    if (!on_source[i].values.empty())
      if (auto how = source_digest_like_stream(b, t)) server[t.name] = tagged_digest(*how, on_source[i].values);
  }
  if (!server.empty()) verified[journaled_server_digests] = server;
  faults_.point("verify", context(b));
  return verified.dump();
}

// A table's batch differs between the shards: the operation stops (exit 70), `hint` says in
// what state it leaves the batch.
void Runner::verification_failed(const Batch& b, const PlannedTable& t, const std::string& on_source, const std::string& on_target,
                                 const std::string& hint) const {
  throw internal_error("verification of " + t.name + " batch " + routing::format_range(b.range) + " failed: " +
                           shard(b.source_id).name + " has count:checksum " + on_source + ", " + ctx_.target.name + " has " +
                           on_target,
                       hint);
}

bool Runner::same_encoding(const Batch& b) {
  auto it = same_encoding_.find(b.source_id);
  if (it != same_encoding_.end()) return it->second;
  auto on_source = source(b).query("SELECT current_setting('client_encoding'), current_setting('server_encoding')")[0];
  auto server = target_->query("SELECT current_setting('server_encoding')")[0][0];
  source_hashing_[b.source_id] = {on_source[0] == on_source[1],
                                  shardio::numeric_probe_matches(source(b).query(shardio::numeric_probe_sql)[0][0])};
  return same_encoding_[b.source_id] = on_source[0] == server;
}

std::optional<ServerDigest> Runner::source_digest_like_stream(const Batch& b, const PlannedTable& t) {
  same_encoding(b);
  const auto& source = source_hashing_.at(b.source_id);
  if (!source.text || !numeric_native_) return std::nullopt;
  // Numerics hashed by their text (the target's probe differs from shardctl's): the same on
  // every server.
  if (!*numeric_native_) return ServerDigest::values_numeric_text;
  if (source.numerics) return ServerDigest::values;
  for (auto k : value_kinds_of(t))
    if (k == shardio::ValueKind::numeric || k == shardio::ValueKind::numeric_fixed) return std::nullopt;
  return ServerDigest::values;
}

std::vector<shardio::ValueKind> value_kinds_of(const PlannedTable& t) {
  if (!t.binary || t.types.size() != t.columns.size()) return {};
  std::vector<shardio::ValueKind> kinds;
  for (const auto& type : t.types) {
    auto k = shardio::value_kind(type);
    if (!k) return {};
    kinds.push_back(*k);
  }
  return kinds;
}

namespace {

// "value digest of a, b; rows read back of c": tables[i] by value digest where by_value[i].
std::string describe(const std::vector<PlannedTable>& tables, const std::vector<bool>& by_value) {
  std::string values, rows;
  auto add = [](std::string& list, const std::string& name) { list += (list.empty() ? "" : ", ") + name; };
  for (std::size_t i = 0; i < tables.size(); ++i) add(by_value[i] ? values : rows, tables[i].name);
  return (values.empty() ? "" : "value digest of " + values) + (values.empty() || rows.empty() ? "" : "; ") +
         (rows.empty() ? "" : "rows read back of " + rows);
}

}  // namespace

std::string verify_method(const std::vector<PlannedTable>& tables) {
  std::vector<bool> by_value;
  for (const auto& t : tables) by_value.push_back(!value_kinds_of(t).empty());
  return describe(tables, by_value);
}

std::vector<shardio::ValueKind> Runner::value_kinds(const PlannedTable& t, const Batch& b) {
  if (!same_encoding(b)) return {};
  auto kinds = value_kinds_of(t);
  // A numeric's cheap hash covers its digits as the server holds them in memory: only where
  // the client computes the same does it stand for the numeric's text.
  if (!numeric_native_) numeric_native_ = shardio::numeric_probe_matches(target_->query(shardio::numeric_probe_sql)[0][0]);
  if (!*numeric_native_)
    for (auto& k : kinds)
      if (k == shardio::ValueKind::numeric || k == shardio::ValueKind::numeric_fixed) k = shardio::ValueKind::numeric_text;
  return kinds;
}

std::vector<shardio::ValueColumn> Runner::value_columns(const PlannedTable& t, const std::vector<shardio::ValueKind>& kinds) {
  std::vector<shardio::ValueColumn> cols;
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    cols.push_back({catalog::quote_ident(t.columns[c]), kinds[c], c < t.not_null.size() && t.not_null[c]});
  return cols;
}

bool Runner::read_by_blocks(const PlannedTable& t) {
  auto it = read_by_blocks_.find(t.name);
  if (it != read_by_blocks_.end()) return it->second;
  auto r = target_->query("SELECT current_setting('server_version_num')::int >= 140000 AND c.relkind = 'r' AND NOT c.relhassubclass "
                          "FROM pg_class c WHERE c.oid = $1::regclass",
                          {t.quoted});
  return read_by_blocks_[t.name] = !r.empty() && r[0][0] == "t";
}

std::uint64_t Runner::ring_bytes() {
  // GetAccessStrategy(BAS_BULKWRITE): 16 MB, at most an eighth of shared_buffers.
  if (!ring_bytes_)
    ring_bytes_ = std::stoull(target_->query("SELECT least(16 * 1024 * 1024, setting::bigint * current_setting('block_size')::bigint / 8) "
                                             "FROM pg_settings WHERE name = 'shared_buffers'")[0][0]);
  return *ring_bytes_;
}

// The reads that verify a batch on the target: one task per table, or per part of a big
// table's key range, and for each table the digest its load transaction read back instead.
struct Runner::TargetReads {
  std::vector<shardio::ReadTask> tasks;
  std::vector<std::size_t> table_of;  // the table (index into ctx_.tables) each task reads
  std::vector<std::optional<std::string>> read_in_load;  // by table
  int loaded = 0;                                         // tables read back in the load

  // Every table's digest: the one read in the load, or its tasks' results merged.
  std::vector<std::string> digests(std::vector<shardio::ReadResult> results) const {
    std::vector<std::optional<shardio::ReadResult>> merged(read_in_load.size());
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      auto& m = merged[table_of[k]];
      if (!m) {
        m = std::move(results[k]);
      } else if (tasks[k].value) {
        m->value = shardio::add_value_digests(m->value, results[k].value);
      } else {
        m->digest->merge(*results[k].digest);
      }
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < merged.size(); ++i) {
      const auto& m = merged[i];
      out.push_back(read_in_load[i] ? *read_in_load[i] : m->digest ? m->digest->text() : m->value);
    }
    return out;
  }
};

namespace {

// No plain index scans: a batch read right after its load has stale statistics (a few
// thousand rows where it holds hundreds of thousands), and an index scan fetches its heap
// tuple by tuple. A bitmap scan of the same range reads each page once, in page-at-a-time
// visibility mode: about 40% less time per row on a just-loaded batch (bench/README).
constexpr const char* verify_read_settings = "SET enable_indexscan = off";

}  // namespace

std::vector<std::string> Runner::target_digests(const Batch& b, const std::vector<Digests>& source) {
  TargetReads reads = plan_reads(b, source);
  stats_.verify = describe_reads(reads, source);
  return reads.digests(run_reads(reads.tasks));
}

Runner::TargetReads Runner::plan_reads(const Batch& b, const std::vector<Digests>& source) {
  TargetReads reads;
  reads.read_in_load.resize(ctx_.tables.size());
  for (std::size_t i = 0; i < ctx_.tables.size(); ++i) {
    // Tables whose digest the load transaction read back (load_digest.hpp) are not read again.
    auto it = loaded_.find(ctx_.tables[i].name);
    if (streamed_batch_ == b.no && it != loaded_.end()) {
      reads.read_in_load[i] = it->second;
      ++reads.loaded;
      continue;
    }
    add_table_reads(b, i, source[i], reads);
  }
  return reads;
}

// The table's reads: its server's value digest where the source's stream has one, else its
// rows streamed back; over parts of its key range when it is big enough (read_parts.hpp).
void Runner::add_table_reads(const Batch& b, std::size_t i, const Digests& source, TargetReads& reads) {
  const auto& t = ctx_.tables[i];
  std::int64_t rows = std::stoll(source.stream);
  bool values = !source.values.empty();
  std::vector<KeyRange> parts{b.range};
  int want = read_parts(ctx_.parallel, rows, t.binary, ctx_.map.kind);
  if (want > 1) parts = cut(t, b.range, want);
  // The digest's select list is the same for every part of the table.
  std::string digest_sql;
  if (values) digest_sql = "SELECT " + shardio::value_digest_sql(value_columns(t, value_kinds(t, b))) + " FROM " + t.quoted + " WHERE ";
  for (const auto& p : parts) {
    shardio::ReadTask task;
    task.weight = rows / static_cast<std::int64_t>(parts.size());
    if (values) {
      task.sql = digest_sql + filter(*target_, t, p);
      task.value = true;
    } else {
      task.sql = select_copy(*target_, t, p);
      task.binary = t.binary;
    }
    reads.tasks.push_back(std::move(task));
    reads.table_of.push_back(i);
  }
}

// For -v: which tables are verified how, and where the reads ran.
std::string Runner::describe_reads(const TargetReads& reads, const std::vector<Digests>& source) const {
  std::vector<bool> by_value;
  for (const auto& d : source) by_value.push_back(!d.values.empty());
  std::string readers = "on the connection that loaded the batch";
  if (ctx_.parallel > 1)
    readers = "over up to " + std::to_string(std::min<std::size_t>(static_cast<std::size_t>(ctx_.parallel), reads.tasks.size())) +
              " connection(s)";
  std::string how;
  if (reads.loaded > 0)
    how = "in the load transaction: " + std::to_string(read_in_load_.by_block) + " read(s) by block, " +
          std::to_string(read_in_load_.by_range) + " by key range";
  if (!reads.tasks.empty()) how += (how.empty() ? "" : "; ") + std::to_string(reads.tasks.size()) + " read(s) " + readers;
  return describe(ctx_.tables, by_value) + " (" + how + ")";
}

std::vector<shardio::ReadResult> Runner::run_reads(const std::vector<shardio::ReadTask>& tasks) {
  if (tasks.empty()) return {};  // every table was read back in the load transaction
  if (ctx_.parallel == 1) return read_on_loading_session(tasks);
  if (!readers_)
    readers_ = std::make_unique<shardio::ReadPool>(ctx_.target.dsn, "shard " + ctx_.target.name,
                                                   std::string(shardio::session_settings) + "; " + verify_read_settings,
                                                   ctx_.parallel);
  return readers_->run(tasks);
}

// One reader: the session that loaded the batch reads it back, one task after the other. Its
// backend has the batch's pages and the tables' catalog entries at hand, and the move keeps one
// connection to the target, not two.
std::vector<shardio::ReadResult> Runner::read_on_loading_session(const std::vector<shardio::ReadTask>& tasks) {
  target_->exec(verify_read_settings);
  struct Reset {  // the session goes on loading and probing with the planner's defaults
    shardio::RawConn& conn;
    ~Reset() {
      try {
        conn.exec("RESET enable_indexscan");
      } catch (...) {  // the connection failed; the error that brought us here is reported
      }
    }
  } reset{*target_};
  std::vector<shardio::ReadResult> results;
  for (const auto& task : tasks) results.push_back(shardio::read_one(*target_, task));
  return results;
}

std::string Runner::select_copy(shardio::RawConn& conn, const PlannedTable& t, const KeyRange& r) const {
  return "COPY (SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " + filter(conn, t, r) + ") TO STDOUT" +
         copy_format(t.binary);
}

std::vector<KeyRange> Runner::cut(const PlannedTable& t, const KeyRange& r, int parts) {
  routing::KeyType bt = catalog::bound_type(ctx_.map.kind, ctx_.map.key_type);
  std::optional<std::pair<routing::Key, routing::Key>> held;
  if (cut_needs_held_keys(bt, r)) {
    // The keys the target holds at the open side: two index probes.
    auto ends = target_->query("SELECT min(" + catalog::quote_ident(t.key_column) + ")::text, max(" +
                               catalog::quote_ident(t.key_column) + ")::text FROM " + t.quoted + " WHERE " + filter(*target_, t, r));
    if (!ends.empty() && !ends[0][0].empty()) held.emplace(routing::parse_key(bt, ends[0][0]), routing::parse_key(bt, ends[0][1]));
  }
  return cut_for_reads(bt, r, parts, held);
}

Runner::Digests Runner::stream_digest(shardio::RawConn& conn, const PlannedTable& t, const KeyRange& r,
                                      const std::vector<shardio::ValueKind>& kinds) const {
  shardio::CopyDigest digest(t.binary, kinds);
  shardio::copy_out_to(conn, select_copy(conn, t, r), [&](std::string_view chunk) { digest.add(chunk); });
  if (!digest.complete()) throw internal_error("the COPY stream of " + t.name + " ended inside a row");
  return {digest.text(), kinds.empty() ? "" : digest.value_text()};
}

}  // namespace shardctl::migrate
