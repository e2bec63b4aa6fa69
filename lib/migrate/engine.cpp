// Engine: journaling operations (split, merge, move) in the catalog, running and resuming
// them (the per-batch protocol is in runner.cpp), cancelling, and reporting their status.
#include <algorithm>
#include <map>
#include <cstdlib>

#include "catalog/key_sql.hpp"
#include "catalog/locks.hpp"
#include "catalog/names.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"
#include "migrate/guard.hpp"
#include "migrate/load_path.hpp"
#include "migrate/operation.hpp"
#include "migrate/runner.hpp"
#include "journal/journal.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/shard_schema.hpp"
#include "shardside/guard.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

namespace {

// The shards an operation's batches come from (only those of batches done, when asked).
std::vector<std::int64_t> source_shards(pg::Connection& catalog, const std::string& op_id, bool done_only) {
  std::vector<std::int64_t> out;
  catalog.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params("SELECT DISTINCT coalesce(b.source_shard_id, o.source_shard_id) FROM shardctl.op_batches b "
                                        "JOIN shardctl.operations o USING (op_id) WHERE b.op_id = $1 AND (NOT $2 OR b.step = 'done')",
                                        op_id, done_only))
      out.push_back(r[0].as<std::int64_t>());
  });
  return out;
}

// One live runner per operation (see journal/journal.hpp): false when another process runs it.
bool take_runner_lock(pg::Connection& catalog, const std::string& op_id) {
  bool locked = false;
  catalog.read([&](pqxx::work& tx) { locked = journal::try_lock_runner(tx, op_id); });
  return locked;
}

void release_runner_lock(pg::Connection& catalog, const std::string& op_id) {
  catalog.read([&](pqxx::work& tx) { journal::unlock_runner(tx, op_id); });
}

// What the journal holds about an operation that a run starts from.
struct Journaled {
  journal::OperationStatus state = journal::OperationStatus::running;
  std::string map_name;
  std::int64_t target_id = 0;
  std::optional<std::string> low, high;  // the claim's bounds as the catalog prints them
  nlohmann::json args;                   // the request, as journaled
};

// Reads the operation, locked, and takes it over (its fencing token into `token`), unless it
// is over (done or cancelled): then only its state is read.
Journaled read_and_take_over(pg::Connection& catalog, const std::string& op_id, std::int64_t& token) {
  Journaled op;
  catalog.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT kind, status, map_id, target_shard_id, "
                            "coalesce(lower(int_range)::text, lower(text_range)::text, lower(uuid_range)::text), "
                            "coalesce(upper(int_range)::text, upper(text_range)::text, upper(uuid_range)::text), args::text "
                            "FROM shardctl.operations WHERE op_id = $1 FOR UPDATE",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
    op.state = read_word<journal::OperationStatus>(r[0][1].as<std::string>());
    if (journal::is_over(op.state)) return;
    auto kind = read_word<journal::OperationKind>(r[0][0].as<std::string>());
    if (!journal::is_migration(kind))
      throw usage_error("operation " + op_id + " is a " + std::string(journal::to_text(kind)) + ", not a split, merge or move");
    op.target_id = r[0][3].as<std::int64_t>();
    op.map_name = tx.exec_params1("SELECT name FROM shardctl.maps WHERE map_id = $1", r[0][2].as<std::int64_t>())[0].as<std::string>();
    token = journal::take_over(tx, op_id);
    if (!r[0][4].is_null()) op.low = r[0][4].as<std::string>();
    if (!r[0][5].is_null()) op.high = r[0][5].as<std::string>();
    op.args = nlohmann::json::parse(r[0][6].as<std::string>());
  });
  return op;
}

// The run's map, shards, claim and settings, from the journal and the catalog.
void fill_context(RunContext& ctx, catalog::Store& store, const Journaled& op, const EngineOptions& options) {
  ctx.map = store.get_map(op.map_name);
  ctx.fence_grace = options.fence_grace;
  ctx.guard_wait_seconds = options.guard_wait_seconds;
  ctx.parallel = options.parallel;
  ctx.online = online_from_args(op.args);
  if (op.args.contains("sync_references")) ctx.references_to_sync = op.args["sync_references"].get<std::vector<std::string>>();
  ctx.space = shardio::RouteSpace{ctx.map.kind, ctx.map.key_type};
  routing::KeyType bt = catalog::bound_type(ctx.map.kind, ctx.map.key_type);
  if (op.low) ctx.range.low = routing::parse_key(bt, *op.low);
  if (op.high) ctx.range.high = routing::parse_key(bt, *op.high);
  for (const auto& s : store.list_shards()) ctx.shards[s.id] = s;
  ctx.target = ctx.shards.at(op.target_id);
  ctx.column = catalog::range_column(ctx.map.kind, ctx.map.key_type);
  ctx.ctor = catalog::range_constructor(ctx.map.kind, ctx.map.key_type);
}

// Text keys are compared (or hashed) in the column's own collation only where, on every shard
// the batches read, that gives the answers bytes give (the plan checked the same; a source may
// differ from the target).
void narrow_collations_to_sources(RunContext& ctx, const std::vector<std::int64_t>& sources) {
  for (auto& t : ctx.tables) {
    if (!t.key_own_collation) continue;
    for (auto id : sources) {
      shardio::RawConn src(ctx.shards.at(id).dsn, "shard " + ctx.shards.at(id).name);
      t.key_own_collation = t.key_own_collation && shardio::own_collation_fits(src, t.quoted, t.key_column, ctx.map.kind);
    }
  }
}

// The load path the run takes now, proven on the target and every source (load_path.hpp).
LoadPath load_path_now(const RunContext& ctx, shardio::RawConn& target, const std::vector<std::int64_t>& sources, bool checked_load) {
  std::vector<std::unique_ptr<shardio::RawConn>> conns;
  std::vector<shardio::RawConn*> srcs;
  for (auto id : sources) {
    conns.push_back(std::make_unique<shardio::RawConn>(ctx.shards.at(id).dsn, "shard " + ctx.shards.at(id).name));
    srcs.push_back(conns.back().get());
  }
  return choose_load_path(target, srcs, ctx.tables, ctx.references, checked_load);
}

// The tables the run moves and the reference tables it copies, as the target (which every
// batch copies into) has them, parents first; then how their keys compare and how they load.
void prepare_tables(pg::Connection& catalog, catalog::Store& store, RunContext& ctx, bool checked_load) {
  shardio::RawConn target(ctx.target.dsn, "shard " + ctx.target.name);
  for (const auto& t : store.list_tables()) {
    if (t.kind == catalog::TableKind::reference) ctx.references.push_back(catalog::quote_qualified(t.name));
    if (t.kind == catalog::TableKind::sharded && t.map == ctx.map.name) ctx.tables.push_back(describe_table(target, t, ctx.map.kind));
  }
  sort_by_foreign_keys(target, ctx.tables);
  ctx.references = shardio::fk_order(target, ctx.references);  // parents first: nation after region
  auto sources = source_shards(catalog, ctx.op_id, false);
  narrow_collations_to_sources(ctx, sources);
  ctx.path = load_path_now(ctx, target, sources, checked_load);
}

// --verify-fk, after the journal says done: orphans in the moved range on the target are a
// finding about the data (bad input, 65), not a failed move.
void refuse_orphans(const RunContext& ctx) {
  shardio::RawConn target(ctx.target.dsn, "shard " + ctx.target.name);
  target.script(shardio::session_settings);
  KeyRange moved = catalog::claimed_keys(ctx.map.kind, ctx.map.key_type, ctx.range);  // a point is journaled [k,k]
  auto orphans = orphans_in_range(target, ctx.space, ctx.tables, moved);
  if (orphans.empty()) return;
  std::string all;
  for (const auto& o : orphans) all += (all.empty() ? "" : "; ") + o;
  throw data_error("operation " + ctx.op_id + " is done, but --verify-fk found orphans on " + ctx.target.name + " in " +
                       routing::format_range(ctx.range) + ": " + all,
                   "a reference table on " + ctx.target.name + " may lack rows; `shardctl check --orphans` lists them");
}

}  // namespace

Engine::Engine(pg::Connection& catalog, EngineOptions options) : catalog_(catalog), options_(std::move(options)) {
  catalog::Store check(catalog_);
}

Engine::~Engine() {
  for (auto id : locked_maps_) try {
      catalog_.read([&](pqxx::work& tx) { tx.exec_params(catalog::map_data_unlock_shared_sql, catalog::lock_class, id); });
    } catch (...) {
      // The session ends with the process, and its locks with it.
    }
}

void Engine::hold_map_lock(std::int64_t map_id, const std::string& map_name) {
  if (std::find(locked_maps_.begin(), locked_maps_.end(), map_id) != locked_maps_.end()) return;
  bool got = false;
  catalog_.read([&](pqxx::work& tx) {
    got = tx.exec_params1(catalog::map_data_lock_shared_sql, catalog::lock_class, map_id)[0].as<bool>();
  });
  if (!got)
    throw locked_error("`shardctl check --fix` is fixing rows of map " + map_name + "; moves of the map wait until it is done",
                       "try again when the check has finished");
  locked_maps_.push_back(map_id);
}

std::string Engine::start(const Plan& plan, bool preview) {
  std::string column = catalog::range_column(plan.map.kind, plan.map.key_type);
  std::string ctor = catalog::range_constructor(plan.map.kind, plan.map.key_type);
  // The operation's claim: a list point as the catalog stores points, [k,k]; else [low, high).
  catalog::RangeParams claim =
      catalog::claim_params(catalog::bound_type(plan.map.kind, plan.map.key_type), plan.point, plan.range);
  std::optional<std::int64_t> single_source;
  if (plan.segments.size() == 1) single_source = plan.segments.front().source.id;
  std::string op_id;
  hold_map_lock(plan.map.id, plan.map.name);
  catalog_.transact([&](pqxx::work& tx) {
    // Operations on one map are created one at a time, so the overlap check below cannot race.
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext('map:' || $2::text))", catalog::lock_class, plan.map.id);
    auto clash = tx.exec_params("SELECT op_id::text, kind, status FROM shardctl.operations WHERE map_id = $1 AND " +
                                catalog::operation_is_live() + " AND " + column + " && " + ctor + "($2, $3, $4)",
                                plan.map.id, claim.low, claim.high, claim.bounds);
    if (!clash.empty()) {
      auto id = clash[0][0].as<std::string>();
      throw locked_error("operation " + id + " (" + clash[0][1].as<std::string>() + ", " + clash[0][2].as<std::string>() +
                             ") already works on an overlapping range of map " + plan.map.name,
                         "wait for it (`shardctl op wait " + id + "`), resume it, or cancel it");
    }
    for (const auto& seg : plan.segments) {
      auto still = tx.exec_params("SELECT 1 FROM shardctl.mappings WHERE mapping_id = $1 AND shard_id = $2 AND "
                                  "status = 'online' FOR UPDATE",
                                  seg.mapping.id, seg.source.id);
      if (still.empty()) throw locked_error("the mappings of map " + plan.map.name + " changed while planning", "run the command again");
    }
    if (preview) return;  // --dry-run: every check above ran; nothing is journaled
    auto args = plan.args;
    if (plan.online) args["online"] = online_json(*plan.online);
    if (!plan.references_to_sync.empty()) args["sync_references"] = plan.references_to_sync;
    journal::NewOperation op{plan.kind, plan.map.id, column, ctor, claim, args, single_source, plan.target.id,
                             plan.batch_size,
                             nlohmann::json{{"rows_total", plan.rows_total}, {"keys_total", plan.keys_total},
                                            {"estimated_bytes", plan.estimated_bytes}}};
    op_id = journal::insert_running(tx, op);
    for (std::size_t i = 0; i < plan.batches.size(); ++i) {
      const auto& b = plan.batches[i];
      catalog::RangeParams r =
          plan.point ? claim : catalog::RangeParams{routing::format_bound(b.range.low), routing::format_bound(b.range.high), "[)"};
      tx.exec_params("INSERT INTO shardctl.op_batches (op_id, batch_no, source_shard_id, keys, " + column +
                         ") VALUES ($1, $2, $3, $7, " + ctor + "($4, $5, $6))",
                     op_id, static_cast<int>(i + 1), plan.segments.at(b.segment).source.id, r.low, r.high, r.bounds, b.keys);
    }
  });
  return op_id;
}

journal::OpStatus Engine::run(const std::string& op_id, const std::function<void(const Progress&)>& progress) {
  if (!journal::is_operation_id(op_id))
    throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  if (!take_runner_lock(catalog_, op_id)) throw journal::run_by_another(status(op_id));
  RunContext ctx;
  ctx.op_id = op_id;
  Journaled op = read_and_take_over(catalog_, op_id, ctx.token);
  if (journal::is_over(op.state)) {
    release_runner_lock(catalog_, op_id);
    return status(op_id);
  }
  catalog::Store store(catalog_);
  fill_context(ctx, store, op, options_);
  try {
    hold_map_lock(ctx.map.id, ctx.map.name);
    prepare_tables(catalog_, store, ctx, options_.checked_load);
    Runner(catalog_, ctx, progress).run();
  } catch (const Error& e) {
    // Journal the failure for `op show`; the operation stays resumable.
    throw journal::failed(catalog_, op_id, e, ctx.token);
  }
  release_runner_lock(catalog_, op_id);
  auto done = status(op_id);
  if (options_.verify_fk && done.status == journal::OperationStatus::done) refuse_orphans(ctx);
  return done;
}

void Engine::request_cancel(const std::string& op_id) {
  check_cancellable(op_id);
  journal::request_cancel(catalog_, op_id);
}

journal::OpStatus Engine::preview_run(const std::string& op_id) {
  auto op = status(op_id);  // "running" only while a live process holds its runner lock
  if (op.status == journal::OperationStatus::running) throw journal::run_by_another(op);
  return op;
}

journal::OpStatus Engine::status(const std::string& op_id) { return journal::operation_status(catalog_, op_id); }

std::vector<journal::OpStatus> Engine::list() { return journal::list_operations(catalog_); }

std::vector<Unfenced> Engine::unfence(const std::string& op_id, bool dry_run) {
  auto op = status(op_id);
  if (!journal::is_over(op.status))
    throw locked_error("operation " + op_id + " is " + std::string(journal::to_text(op.status)) + ": its fences are lifted once it is done or cancelled",
                       "`shardctl op wait " + op_id + "`, then unfence");
  catalog::Store store(catalog_);
  auto map = store.get_map(op.map);
  std::vector<GuardedTable> tables;
  for (const auto& t : store.list_tables())
    if (t.kind == catalog::TableKind::sharded && t.map == map.name) tables.push_back({catalog::quote_qualified(t.name), t.key_column.value_or("")});
  auto sources = source_shards(catalog_, op_id, true);
  std::map<std::int64_t, catalog::Shard> shards;
  for (const auto& s : store.list_shards()) shards[s.id] = s;
  std::vector<Unfenced> out;
  for (auto id : sources) {
    const auto& s = shards.at(id);
    shardio::RawConn conn(s.dsn, "shard " + s.name);
    bool has = shardside::has_guard_table(conn);
    int fences = has ? shardside::op_fence_count(conn, op_id) : 0;
    if (!dry_run && has) {
      // Parents first, as release_guard() expects (it drops triggers children first).
      auto sorted = tables;
      shardio::sort_parents_first(conn, sorted, [](const GuardedTable& t) { return t.quoted_table; });
      release_guard(conn, op_id, map.id, sorted, true);
    }
    out.push_back({s.name, fences});
  }
  return out;
}

}  // namespace shardctl::migrate
