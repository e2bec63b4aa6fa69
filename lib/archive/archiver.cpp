#include "archive/archiver.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "archive/archive_set.hpp"
#include "archive/delivery.hpp"
#include "archive/predicate.hpp"
#include "archive/shard_worker.hpp"
#include "archive/xref_children.hpp"
#include "catalog/catalog.hpp"
#include "catalog/locks.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "shardio/row_checksum.hpp"
#include "shardside/receipts.hpp"

namespace shardctl::archive {
namespace {

// The shards a job archives from: those of the root table's map when the catalog knows it as a
// sharded table, else every shard. Only online shards: the others are reported and wait.
std::vector<catalog::Shard> job_shards(catalog::Store& store, const Job& job, std::vector<std::string>& skipped) {
  std::optional<std::string> map;
  for (const auto& t : store.list_tables())
    if (t.name == job.table && t.kind == catalog::TableKind::sharded) map = t.map;
  std::set<std::string> of_map;
  if (map)
    for (const auto& m : store.list_mappings(*map)) of_map.insert(m.shard);
  std::vector<catalog::Shard> out;
  for (const auto& s : store.list_shards()) {
    if (map && !of_map.count(s.name)) continue;
    if (s.status != catalog::ShardStatus::online) {
      skipped.push_back(s.name + " (" + std::string(catalog::to_text(s.status)) + ")");
      continue;
    }
    out.push_back(s);
  }
  if (out.empty()) throw usage_error("no online shard holds " + job.table, "`shardctl shard list` shows the shards");
  return out;
}

std::optional<KeyValues> upper_bound(shardio::RawConn& shard, const ArchiveSet& set) {
  auto r = shard.query(set.keyset.upper_bound_sql());
  if (r.empty()) return std::nullopt;
  return r[0];
}

// Everything a run checks, on every shard, before anything changes or any shard's rows are
// read: the predicate (parsed and rendered by each shard's server), the primary key, the tables
// and foreign keys, which must be the same everywhere. Returns each shard's set; `visit` reads
// what else the caller needs of a shard while its connection is open. One shard at a time, each
// connection closed before the next opens: a fleet of thousands of shards is never connected
// to at once.
struct CheckedShard {
  catalog::Shard shard;
  ArchiveSet set;
};
using Visit = std::function<void(const CheckedShard&, shardio::RawConn&)>;
std::vector<CheckedShard> check_shards(const std::vector<catalog::Shard>& shards, const Job& job, const XrefChildren& xrefs,
                                       const Visit& visit = {}) {
  std::vector<CheckedShard> out;
  for (const auto& s : shards) {
    shardio::RawConn conn(s.dsn, "shard " + s.name);
    auto set = discover_archive_set(conn, job, xrefs);
    if (!out.empty() && set.describe() != out.front().set.describe())
      throw usage_error("the tables of " + job.table + " differ between shards (" + out.front().shard.name + " and " + s.name + ")",
                        "an archive run needs the same tables and foreign keys on every shard; `shardctl schema drift` shows differences");
    out.push_back({s, std::move(set)});
    if (visit) visit(out.back(), conn);
  }
  return out;
}

// What a run would take from the shard, counted in a read-only transaction that is rolled back:
// whatever the predicate calls, a dry run changes nothing.
ShardPreview count_shard(shardio::RawConn& raw, const ArchiveSet& set, const std::string& shard) {
  ShardPreview sp;
  sp.shard = shard;
  shardio::in_rolled_back_transaction(raw, [&] {
    raw.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    auto up = upper_bound(raw, set);
    if (!up) {
      for (const auto& t : set.tables) sp.rows.emplace_back(t.name, 0);
      return;
    }
    std::vector<std::string> quoted;
    for (const auto& v : *up) quoted.push_back(raw.literal(v));
    auto high = set.keyset.literal_row(quoted);
    auto preds = set.predicates(set.root_filter(nullptr, high));
    for (std::size_t i = 0; i < set.tables.size(); ++i) {
      const auto& t = set.tables[i];
      sp.rows.emplace_back(t.name,
                           std::stoll(raw.query("SELECT count(*) FROM " + t.quoted + " " + t.alias + " WHERE " + preds[i])[0][0]));
    }
    auto order = set.keyset.key_order();
    auto firsts = raw.query("SELECT " + order + " FROM " + set.tables[0].quoted + " t0 WHERE " + preds[0] + " ORDER BY " +
                            order + " LIMIT 1");
    if (!firsts.empty()) sp.first_key = firsts[0];
    auto lasts = raw.query("SELECT " + order + " FROM " + set.tables[0].quoted + " t0 WHERE " + preds[0] + " ORDER BY " +
                           set.keyset.key_order_desc() + " LIMIT 1");
    if (!lasts.empty()) sp.last_key = lasts[0];
    if (!set.cascade && !set.referencing.empty())
      sp.refused = std::stoll(
          raw.query("SELECT count(*) FROM " + set.tables[0].quoted + " t0 WHERE " + set.refused_filter(nullptr, high))[0][0]);
  });
  return sp;
}

// The operation's runner lock (journal::try_lock_runner) while a run executes: 75 at once when
// a live process holds it.
class RunnerLock {
 public:
  RunnerLock(pg::Connection& catalog, const std::string& run_id) : catalog_(catalog), run_id_(run_id) {
    if (!journal::is_operation_id(run_id))
      throw usage_error("'" + run_id + "' is not an operation id", "`shardctl op list` shows them");
    bool locked = false;
    catalog_.read([&](pqxx::work& tx) { locked = journal::try_lock_runner(tx, run_id); });
    if (!locked) throw journal::run_by_another(journal::operation_status(catalog_, run_id));
  }
  ~RunnerLock() {
    try {
      catalog_.read([&](pqxx::work& tx) { journal::unlock_runner(tx, run_id_); });
    } catch (...) {
      // The session ends with the process, and its locks with it.
    }
  }
  RunnerLock(const RunnerLock&) = delete;
  RunnerLock& operator=(const RunnerLock&) = delete;

 private:
  pg::Connection& catalog_;
  std::string run_id_;
};

// A dir: run's directory and its first manifest, written once the run is journaled:
// unavailable (69) before any row moves.
void start_run_directory(const Job& job, const std::string& id, const std::string& server_encoding, const ArchiveSet& set) {
  Manifest m;
  m.run = id;
  m.job = job.name;
  m.root_table = job.table;
  m.predicate = job.where;
  m.server_encoding = server_encoding;
  SharedManifest manifest(run_directory(job.to, id), m);
  make_delivery(job.to, &manifest)->prepare(set, true);
  write_manifest(run_directory(job.to, id), m);
}

// A new run of `job`, journaled; returns its id. Everything is checked on every shard, and the
// destination prepared, before the journal's first write: a bad predicate or an unreachable
// destination changes nothing.
std::string start_run(pg::Connection& catalog, const Job& job, const RunOptions& options) {
  catalog::Store store(catalog);
  std::vector<std::string> skipped;
  auto shards = job_shards(store, job, skipped);
  for (const auto& s : skipped)
    if (options.on_note) options.on_note("shard " + s + " is skipped; its rows wait for a later run");
  std::vector<std::pair<std::int64_t, std::optional<KeyValues>>> upper;
  std::string encoding;
  auto checked = check_shards(shards, job, xref_children(store), [&](const CheckedShard& c, shardio::RawConn& conn) {
    upper.emplace_back(c.shard.id, upper_bound(conn, c.set));
    encoding = conn.query("SHOW server_encoding")[0][0];
  });
  ArchiveSet first = std::move(checked.front().set);
  checked.clear();  // the workers open their own connections
  for (const auto& n : first.notes)
    if (options.on_warning) options.on_warning(n);
  if (job.to.kind == Destination::Kind::postgres) {
    SharedManifest unused(run_directory(job.to, "check"), Manifest{});
    make_delivery(job.to, &unused)->prepare(first, true);
  }
  std::string id;
  catalog.transact([&](pqxx::work& tx) { id = insert_run(tx, job, first.describe(), upper); });
  if (job.to.kind == Destination::Kind::dir) start_run_directory(job, id, encoding, first);
  return id;
}

// The shards a run has left, and every shard of the catalog by id.
struct ShardsLeft {
  std::map<std::int64_t, catalog::Shard> by_id;
  using Todo = std::vector<std::pair<catalog::Shard, std::int64_t>>;
  Todo todo;  // the run's shards not done, with their ids
};

ShardsLeft shards_left(catalog::Store& store, const RunReport& run) {
  ShardsLeft out;
  for (const auto& s : store.list_shards()) out.by_id[s.id] = s;
  for (const auto& s : run.shards)
    if (s.state != ShardState::done) out.todo.emplace_back(out.by_id.at(s.shard_id), s.shard_id);
  return out;
}

// What the shard workers share, with --max-runtime, --sleep and --max-lag of this invocation
// over the job's own, and the run taken over by this process (a new fencing token).
void take_over_run(pg::Connection& catalog, RunShared& shared, const std::string& run_id, const Job& job,
                   const RunOptions& options, const std::string& catalog_dsn, XrefChildren xrefs) {
  shared.xrefs = std::move(xrefs);
  shared.run = run_id;
  shared.job = job;
  if (options.max_runtime) shared.job.max_runtime = options.max_runtime;
  if (options.sleep) shared.job.sleep = options.sleep;
  if (options.max_lag) shared.job.max_lag = options.max_lag;
  if (shared.job.max_runtime) shared.deadline = std::chrono::steady_clock::now() + *shared.job.max_runtime;
  shared.catalog_dsn = catalog_dsn;
  shared.on_batch = options.on_batch;
  shared.on_note = options.on_note;
  catalog.transact([&](pqxx::work& tx) {
    auto args = tx.exec_params1("SELECT args::text FROM shardctl.operations WHERE op_id = $1 FOR UPDATE", run_id);
    shared.tables = nlohmann::json::parse(args[0].as<std::string>()).value("tables", nlohmann::json::array());
    shared.token = journal::take_over(tx, run_id);
  });
}

// Archives the shards, `parallel` at a time. Returns the first failure, if any.
std::exception_ptr archive_shards(RunShared& shared, const ShardsLeft::Todo& todo, int parallel) {
  std::mutex err_mu;
  std::exception_ptr error;
  // The first failure stops the shards still running at their next batch; none starts after it.
  parallel_for(todo.size(), parallel, [&](std::size_t i) {
    if (shared.stopping()) return;
    try {
      archive_shard(shared, todo[i].first, todo[i].second);
    } catch (...) {
      std::lock_guard lock(err_mu);
      if (!error) error = std::current_exception();
      shared.request_stop(StopReason::failed);
    }
  });
  return error;
}

// Done when every shard is; cancelled when asked; else paused by --max-runtime: the next
// `archive run` of the job (or `op resume`) continues here.
void journal_end(pg::Connection& catalog, const std::string& run_id, std::int64_t token, bool all_done, StopReason reason) {
  catalog.transact([&](pqxx::work& tx) {
    journal::check_fencing_token(tx, run_id, token);
    if (all_done) journal::mark_finished(tx, run_id, journal::OperationStatus::done);
    else if (reason == StopReason::cancelled) journal::mark_finished(tx, run_id, journal::OperationStatus::cancelled);
    else
      tx.exec_params("UPDATE shardctl.operations SET status = $2, phase = 'max-runtime', lease_holder = NULL, "
                     "lease_until = NULL, updated_at = now() WHERE op_id = $1",
                     run_id, std::string(journal::to_text(journal::OperationStatus::paused)));
  });
}

// A run that is over needs its receipts on the shards no more.
void drop_receipts(const std::string& run_id, const RunReport& run, const std::map<std::int64_t, catalog::Shard>& by_id) {
  for (const auto& s : run.shards) try {
      shardio::RawConn raw(by_id.at(s.shard_id).dsn, "shard " + s.shard);
      shardside::drop_archive_receipts(raw, run_id);
    } catch (...) {
      // A receipt left behind is harmless: the journal already says the batch was deleted.
    }
}

nlohmann::json key_json(const std::optional<KeyValues>& k) { return k ? nlohmann::json(*k) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json to_json(const Preview& p) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& s : p.shards) {
    nlohmann::json rows = nlohmann::json::object();
    for (const auto& [t, n] : s.rows) rows[t] = n;
    shards.push_back({{"shard", s.shard}, {"rows", rows}, {"refused", s.refused},
                      {"first_key", key_json(s.first_key)}, {"last_key", key_json(s.last_key)}});
  }
  return {{"job", p.job.name},       {"table", p.job.table},
          {"where", p.job.where},    {"cascade", p.job.cascade},
          {"to", p.job.to.describe()}, {"continues", p.continues ? nlohmann::json(*p.continues) : nlohmann::json(nullptr)},
          {"shards", shards},        {"skipped", p.skipped},
          {"warnings", p.notes}};
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json shards = nlohmann::json::array();
  std::int64_t total = 0;
  for (const auto& s : r.shards) {
    for (const auto& [t, n] : s.rows.items()) total += n.get<std::int64_t>();
    shards.push_back({{"shard", s.shard}, {"state", std::string(to_text(s.state))}, {"batches", s.batches_done}, {"rows", s.rows},
                      {"refused", s.refused}, {"upper_key", key_json(s.upper)}, {"cursor_key", key_json(s.cursor)}});
  }
  return {{"id", r.op.id},
          {"job", r.job.name},
          {"table", r.job.table},
          {"where", r.job.where},
          {"cascade", r.job.cascade},
          {"to", r.job.to.describe()},
          {"status", std::string(journal::to_text(r.op.status))},
          {"phase", r.op.phase},
          {"error", r.op.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.op.error)},
          {"rows", total},
          {"created_at", r.op.created_at},
          {"updated_at", r.op.updated_at},
          {"shards", shards}};
}

Archiver::Archiver(pg::Connection& catalog, std::string catalog_dsn)
    : catalog_(catalog), catalog_dsn_(std::move(catalog_dsn)) {
  catalog::Store check(catalog_);
}

Archiver::~Archiver() {
  for (const auto& name : locked_jobs_) try {
      catalog_.read([&](pqxx::work& tx) {
        tx.exec_params("SELECT pg_advisory_unlock($1, hashtext('archive-job:' || $2))", catalog::lock_class, name);
      });
    } catch (...) {
      // The session ends with the process, and its locks with it.
    }
}

void Archiver::lock_job(const std::string& name) {
  if (std::find(locked_jobs_.begin(), locked_jobs_.end(), name) != locked_jobs_.end()) return;
  bool got = false;
  std::optional<std::string> holder;
  catalog_.read([&](pqxx::work& tx) {
    got = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext('archive-job:' || $2))", catalog::lock_class, name)[0]
              .as<bool>();
    if (!got) holder = unfinished_run(tx, name);
  });
  if (!got)
    throw locked_error("archive job " + name + " is being run by another process" + (holder ? " (run " + *holder + ")" : ""),
                       holder ? "wait for it with `shardctl op wait " + *holder + "`" : "try again when it has finished");
  locked_jobs_.push_back(name);
}

Preview Archiver::preview(const Job& job) {
  catalog::Store store(catalog_);
  Preview p;
  p.job = job;
  catalog_.read([&](pqxx::work& tx) { p.continues = unfinished_run(tx, job.name); });
  auto shards = job_shards(store, job, p.skipped);
  auto checked = check_shards(shards, job, xref_children(store));
  p.notes = checked.front().set.notes;
  for (auto& c : checked) {
    try {
      // Counted once every shard passed its checks, one connection at a time.
      shardio::RawConn conn(c.shard.dsn, "shard " + c.shard.name);
      p.shards.push_back(count_shard(conn, c.set, c.shard.name));
    } catch (const Error& e) {
      // Only a function that says it is stable or immutable and writes anyway gets this far.
      if (e.kind() != ErrorKind::internal || std::string(e.what()).find("in a read-only transaction") == std::string::npos)
        throw;
      throw usage_error(std::string("the dry run stopped: the archive predicate tried to write (") + e.what() + ")",
                        "a function declared STABLE or IMMUTABLE must not write; declare it VOLATILE, and archive "
                        "refuses it before anything runs");
    }
  }
  SharedManifest manifest(run_directory(job.to, "dry-run"), Manifest{});
  make_delivery(job.to, &manifest)->prepare(checked.front().set, false);
  return p;
}

RunReport Archiver::run(const Job& job, const RunOptions& options) {
  lock_job(job.name);
  std::optional<std::string> unfinished;
  catalog_.read([&](pqxx::work& tx) { unfinished = unfinished_run(tx, job.name); });
  if (unfinished) {
    auto old = report(*unfinished);
    if (!old.job.same_rows(job))
      throw locked_error("archive job " + job.name + " has an unfinished run " + *unfinished +
                             " that archives other rows or to another place (" + old.job.table + " where " + old.job.where +
                             " to " + old.job.to.describe() + ")",
                         "finish it with `shardctl op resume " + *unfinished + "` or drop it with `shardctl op cancel " +
                             *unfinished + "`");
    if (options.on_note) options.on_note("continuing archive run " + *unfinished + " of job " + job.name);
    return execute(*unfinished, options, false);
  }
  return execute(start_run(catalog_, job, options), options, true);
}

RunReport Archiver::resume(const std::string& run_id, const RunOptions& options) { return execute(run_id, options, false); }

RunReport Archiver::report(const std::string& run_id) {
  RunReport r;
  r.op = journal::operation_status(catalog_, run_id);
  if (r.op.kind != run_kind) throw usage_error("operation " + run_id + " is a " + std::string(journal::to_text(r.op.kind)) + ", not an archive run");
  catalog_.read([&](pqxx::work& tx) {
    auto args = tx.exec_params1("SELECT args::text FROM shardctl.operations WHERE op_id = $1", run_id);
    r.job = job_from_json(nlohmann::json::parse(args[0].as<std::string>()));
    r.shards = run_shards(tx, run_id);
  });
  return r;
}

std::vector<journal::OpStatus> Archiver::runs_of(const std::string& name) {
  std::vector<std::string> ids;
  catalog_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params("SELECT op_id::text FROM shardctl.operations WHERE kind = $2 AND "
                                        "args ->> 'job' = $1 ORDER BY created_at DESC",
                                        name, std::string(journal::to_text(run_kind))))
      ids.push_back(r[0].as<std::string>());
  });
  std::vector<journal::OpStatus> out;
  for (const auto& id : ids) out.push_back(journal::operation_status(catalog_, id));
  return out;
}

RunReport Archiver::execute(const std::string& run_id, const RunOptions& options, bool checked) {
  RunnerLock runner(catalog_, run_id);
  auto before = report(run_id);
  if (journal::is_over(before.op.status)) return before;
  lock_job(before.job.name);
  catalog::Store store(catalog_);
  auto left = shards_left(store, before);
  auto xrefs = xref_children(store);
  // A run continued later checks every shard it has left again before touching any: a function
  // the predicate calls may have been redefined since, or a table changed.
  if (!checked) {
    std::vector<catalog::Shard> shards;
    for (const auto& t : left.todo) shards.push_back(t.first);
    check_shards(shards, before.job, xrefs);
  }
  RunShared shared;
  take_over_run(catalog_, shared, run_id, before.job, options, catalog_dsn_, std::move(xrefs));
  std::optional<SharedManifest> manifest;
  if (shared.job.to.kind == Destination::Kind::dir) {
    auto dir = run_directory(shared.job.to, run_id);
    manifest.emplace(dir, read_manifest(dir));
    shared.manifest = &*manifest;
  }
  if (auto error = archive_shards(shared, left.todo, options.parallel)) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      throw journal::failed(catalog_, run_id, e, shared.token, "archive run");
    }
  }
  auto after = report(run_id);
  bool all_done = std::all_of(after.shards.begin(), after.shards.end(), [](const auto& s) { return s.state == ShardState::done; });
  auto reason = shared.stop.load();
  journal_end(catalog_, run_id, shared.token, all_done, reason);
  if (all_done || reason == StopReason::cancelled) drop_receipts(run_id, after, left.by_id);
  return report(run_id);
}

}  // namespace shardctl::archive
