// Engine: journaling operations (split, merge, move) in the catalog, running and resuming
// them (the per-batch protocol is in runner.cpp), cancelling, and reporting their status.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <cstdlib>

#include "catalog/key_sql.hpp"
#include "catalog/locks.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/guard.hpp"
#include "migrate/operation.hpp"
#include "migrate/runner.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

namespace {

std::string holder_name() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

std::optional<std::string> text_of(const std::optional<routing::Key>& k) {
  if (!k) return std::nullopt;
  return routing::format_key(*k);
}

}  // namespace

namespace {

constexpr const char* op_select =
    "SELECT o.op_id::text, o.kind, mp.name AS map, o.status, coalesce(o.phase, '') AS phase, "
    "coalesce(o.int_range::text, o.text_range::text, o.uuid_range::text, '') AS range, "
    "coalesce(s.name, (SELECT string_agg(DISTINCT sh.name, ',') FROM shardctl.op_batches b "
    "JOIN shardctl.shards sh ON sh.shard_id = b.source_shard_id WHERE b.op_id = o.op_id), '') AS source, "
    "coalesce(t.name, '') AS target, "
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS batches, "
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id AND b.step = 'done') AS batches_done, "
    "(SELECT coalesce(sum(rows_moved), 0) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS rows_moved, "
    "(SELECT coalesce(sum(keys) FILTER (WHERE b.step = 'done'), 0) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS keys_done, "
    "coalesce((o.progress ->> 'keys_total')::bigint, 0) AS keys_total, "
    "coalesce((o.progress ->> 'rows_total')::bigint, 0) AS rows_total, "
    "o.cancel_requested, coalesce(o.error, '') AS error, coalesce(o.lease_holder, '') AS lease_holder, "
    "o.created_at::text, o.updated_at::text "
    "FROM shardctl.operations o LEFT JOIN shardctl.maps mp USING (map_id) "
    "LEFT JOIN shardctl.shards s ON s.shard_id = o.source_shard_id "
    "LEFT JOIN shardctl.shards t ON t.shard_id = o.target_shard_id ";

OpStatus op_from(const pqxx::row& r) {
  OpStatus o;
  o.id = r["op_id"].as<std::string>();
  o.kind = r["kind"].as<std::string>();
  o.map = r["map"].is_null() ? "" : r["map"].as<std::string>();
  o.status = r["status"].as<std::string>();
  o.phase = r["phase"].as<std::string>();
  o.range = r["range"].as<std::string>();
  o.source = r["source"].as<std::string>();
  o.target = r["target"].as<std::string>();
  o.batches = r["batches"].as<int>();
  o.batches_done = r["batches_done"].as<int>();
  o.rows_moved = r["rows_moved"].as<std::int64_t>();
  o.rows_total = r["rows_total"].as<std::int64_t>();
  o.keys_done = r["keys_done"].as<std::int64_t>();
  o.keys_total = r["keys_total"].as<std::int64_t>();
  o.cancel_requested = r["cancel_requested"].as<bool>();
  o.error = r["error"].as<std::string>();
  o.lease_holder = r["lease_holder"].as<std::string>();
  o.created_at = r["created_at"].as<std::string>();
  o.updated_at = r["updated_at"].as<std::string>();
  return o;
}

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

bool valid_uuid(const std::string& s) {
  routing::Uuid u;
  return routing::try_parse_uuid(s, u);
}

}  // namespace

nlohmann::json to_json(const OpStatus& o) {
  return {{"id", o.id},           {"kind", o.kind},
          {"map", o.map},         {"status", o.status},
          {"phase", o.phase},     {"range", o.range},
          {"source", o.source},   {"target", o.target},
          {"batches", o.batches}, {"batches_done", o.batches_done},
          {"rows_moved", o.rows_moved}, {"rows_total", o.rows_total},
          {"keys_done", o.keys_done},   {"keys_total", o.keys_total},
          {"cancel_requested", o.cancel_requested},
          {"error", o.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.error)},
          {"lease_holder", o.lease_holder.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.lease_holder)},
          {"created_at", o.created_at}, {"updated_at", o.updated_at}};
}

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
      plan.point ? catalog::point_params(catalog::bound_type(plan.map.kind, plan.map.key_type), *plan.point)
                 : catalog::RangeParams{text_of(plan.range.low), text_of(plan.range.high), "[)"};
  std::optional<std::int64_t> single_source;
  if (plan.segments.size() == 1) single_source = plan.segments.front().source.id;
  std::string op_id;
  hold_map_lock(plan.map.id, plan.map.name);
  catalog_.transact([&](pqxx::work& tx) {
    // Operations on one map are created one at a time, so the overlap check below cannot race.
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext('map:' || $2::text))", catalog::lock_class, plan.map.id);
    auto clash = tx.exec_params("SELECT op_id::text, kind, status FROM shardctl.operations WHERE map_id = $1 AND "
                                "status NOT IN ('done', 'cancelled') AND " + column + " && " + ctor + "($2, $3, $4)",
                                plan.map.id, claim.low, claim.high, claim.bounds);
    if (!clash.empty())
      throw locked_error("operation " + clash[0][0].as<std::string>() + " (" + clash[0][1].as<std::string>() + ", " +
                             clash[0][2].as<std::string>() + ") already works on an overlapping range of map " + plan.map.name,
                         "wait for it (`shardctl op wait ID`), resume it, or cancel it");
    for (const auto& seg : plan.segments) {
      auto still = tx.exec_params("SELECT 1 FROM shardctl.mappings WHERE mapping_id = $1 AND shard_id = $2 AND "
                                  "status = 'online' FOR UPDATE",
                                  seg.mapping.id, seg.source.id);
      if (still.empty()) throw locked_error("the mappings of map " + plan.map.name + " changed while planning", "run the command again");
    }
    if (preview) return;  // --dry-run: every check above ran; nothing is journaled
    op_id = tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, map_id, " + column +
                                ", args, status, phase, source_shard_id, target_shard_id, batch_size, lease_holder, "
                                "lease_until, heartbeat_at, progress) VALUES (gen_random_uuid(), $1, $2, " + ctor +
                                "($3, $4, $5), $6::jsonb, 'running', 'planned', $7, $8, $9, $10, now() + interval '60 seconds', "
                                "now(), $11::jsonb) RETURNING op_id::text",
                            plan.kind, plan.map.id, claim.low, claim.high, claim.bounds, plan.args.dump(), single_source,
                            plan.target.id, plan.batch_size, holder_name(),
                            nlohmann::json{{"rows_total", plan.rows_total}, {"keys_total", plan.keys_total},
                                           {"estimated_bytes", plan.estimated_bytes}}
                                .dump())[0]
                .as<std::string>();
    for (std::size_t i = 0; i < plan.batches.size(); ++i) {
      const auto& b = plan.batches[i];
      catalog::RangeParams r =
          plan.point ? claim : catalog::RangeParams{text_of(b.range.low), text_of(b.range.high), "[)"};
      tx.exec_params("INSERT INTO shardctl.op_batches (op_id, batch_no, source_shard_id, keys, " + column +
                         ") VALUES ($1, $2, $3, $7, " + ctor + "($4, $5, $6))",
                     op_id, static_cast<int>(i + 1), plan.segments.at(b.segment).source.id, r.low, r.high, r.bounds, b.keys);
    }
  });
  return op_id;
}

OpStatus Engine::run(const std::string& op_id, const std::function<void(const Progress&)>& progress) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  // One live runner per operation: a session lock, released by the server the moment the
  // holding process dies, so a killed run can be resumed at once.
  bool locked = false;
  catalog_.read([&](pqxx::work& tx) {
    locked = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext($2))", catalog::lock_class, op_id)[0].as<bool>();
  });
  if (!locked) throw run_by_another(status(op_id));
  RunContext ctx;
  ctx.op_id = op_id;
  std::string state, map_name;
  std::int64_t target_id = 0;
  std::optional<std::string> low, high;
  catalog_.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT kind, status, map_id, target_shard_id, "
                            "coalesce(lower(int_range)::text, lower(text_range)::text, lower(uuid_range)::text), "
                            "coalesce(upper(int_range)::text, upper(text_range)::text, upper(uuid_range)::text) "
                            "FROM shardctl.operations WHERE op_id = $1 FOR UPDATE",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
    state = r[0][1].as<std::string>();
    if (state == "done" || state == "cancelled") return;
    auto kind = r[0][0].as<std::string>();
    if (kind != "split" && kind != "merge" && kind != "move")
      throw usage_error("operation " + op_id + " is a " + kind + ", not a split, merge or move");
    target_id = r[0][3].as<std::int64_t>();
    map_name = tx.exec_params1("SELECT name FROM shardctl.maps WHERE map_id = $1", r[0][2].as<std::int64_t>())[0].as<std::string>();
    ctx.token = tx.exec_params1("UPDATE shardctl.operations SET status = 'running', error = NULL, lease_holder = $2, "
                                "lease_until = now() + interval '60 seconds', heartbeat_at = now(), "
                                "fencing_token = fencing_token + 1 WHERE op_id = $1 RETURNING fencing_token",
                                op_id, holder_name())[0]
                    .as<std::int64_t>();
    if (!r[0][4].is_null()) low = r[0][4].as<std::string>();
    if (!r[0][5].is_null()) high = r[0][5].as<std::string>();
  });
  if (state == "done" || state == "cancelled") {
    catalog_.read([&](pqxx::work& tx) { tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op_id); });
    return status(op_id);
  }

  catalog::Store store(catalog_);
  ctx.map = store.get_map(map_name);
  ctx.fence_grace = options_.fence_grace;
  ctx.guard_wait_seconds = options_.guard_wait_seconds;
  ctx.space = shardio::RouteSpace{ctx.map.kind, ctx.map.key_type};
  routing::KeyType bt = catalog::bound_type(ctx.map.kind, ctx.map.key_type);
  if (low) ctx.range.low = routing::parse_key(bt, *low);
  if (high) ctx.range.high = routing::parse_key(bt, *high);
  for (const auto& s : store.list_shards()) ctx.shards[s.id] = s;
  ctx.target = ctx.shards.at(target_id);
  ctx.column = catalog::range_column(ctx.map.kind, ctx.map.key_type);
  ctx.ctor = catalog::range_constructor(ctx.map.kind, ctx.map.key_type);

  try {
    hold_map_lock(ctx.map.id, ctx.map.name);
    // Table shapes come from the target, which every batch copies into.
    shardio::RawConn target(ctx.target.dsn, "shard " + ctx.target.name);
    for (const auto& t : store.list_tables()) {
      if (t.kind == "reference") ctx.references.push_back(catalog::quote_qualified(t.name));
      if (t.kind == "sharded" && t.map == ctx.map.name) ctx.tables.push_back(describe_table(target, t));
    }
    sort_by_foreign_keys(target, ctx.tables);
    ctx.references = shardio::fk_order(target, ctx.references);  // parents first: nation after region
    // Text keys are compared in the column's own collation only where every shard the batches
    // read orders it like bytes (the plan checked the same; a source may differ from the target).
    auto sources = source_shards(catalog_, op_id, false);
    for (auto& t : ctx.tables) {
      if (!t.key_native_order) continue;
      for (auto id : sources) {
        shardio::RawConn src(ctx.shards.at(id).dsn, "shard " + ctx.shards.at(id).name);
        t.key_native_order = t.key_native_order && shardio::key_sorts_bytewise(src, t.quoted, t.key_column);
      }
    }
    Runner(catalog_, ctx, progress).run();
  } catch (const Error& e) {
    // Journal the failure for `op show`; the operation stays resumable.
    try {
      catalog_.transact([&](pqxx::work& tx) {
        tx.exec_params("UPDATE shardctl.operations SET status = 'failed', error = $2, lease_holder = NULL, updated_at = now() "
                       "WHERE op_id = $1 AND fencing_token = $3",
                       op_id, std::string(e.what()), ctx.token);
      });
    } catch (...) {
    }
    throw Error(e.kind(), std::string(e.what()) + " (operation " + op_id + ")",
                e.hint().empty() ? "`shardctl op resume " + op_id + "` continues where it stopped" : e.hint());
  }
  catalog_.read([&](pqxx::work& tx) { tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op_id); });
  return status(op_id);
}

void Engine::request_cancel(const std::string& op_id) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id");
  catalog_.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("UPDATE shardctl.operations SET cancel_requested = true, updated_at = now() "
                            "WHERE op_id = $1 RETURNING status",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  });
}

// A "running" operation whose runner's session lock is free has no live process: it was
// killed or lost its catalog connection, and waits for `op resume`.
static void mark_interrupted(pg::Connection& catalog, OpStatus& op) {
  if (op.status != "running") return;
  catalog.read([&](pqxx::work& tx) {
    bool free = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext($2))", catalog::lock_class, op.id)[0].as<bool>();
    if (free) {
      tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op.id);
      op.status = "interrupted";
    }
  });
}

Error Engine::run_by_another(const OpStatus& op) {
  return locked_error("operation " + op.id + " is being run by " + (op.lease_holder.empty() ? "another process" : op.lease_holder),
                      "wait for it with `shardctl op wait " + op.id + "`");
}

OpStatus Engine::preview_run(const std::string& op_id) {
  auto op = status(op_id);  // "running" only while a live process holds its runner lock
  if (op.status == "running") throw run_by_another(op);
  return op;
}

OpStatus Engine::status(const std::string& op_id) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  std::optional<OpStatus> out;
  catalog_.read([&](pqxx::work& tx) {
    auto r = tx.exec_params(std::string(op_select) + "WHERE o.op_id = $1", op_id);
    if (!r.empty()) out = op_from(r[0]);
  });
  if (out) mark_interrupted(catalog_, *out);
  if (!out) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  return *out;
}

std::vector<OpStatus> Engine::list() {
  std::vector<OpStatus> out;
  catalog_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(std::string(op_select) + "ORDER BY o.created_at DESC")) out.push_back(op_from(r));
  });
  for (auto& op : out) mark_interrupted(catalog_, op);
  return out;
}

std::vector<Unfenced> Engine::unfence(const std::string& op_id, bool dry_run) {
  auto op = status(op_id);
  if (op.status != "done" && op.status != "cancelled")
    throw locked_error("operation " + op_id + " is " + op.status + ": its fences are lifted once it is done or cancelled",
                       "`shardctl op wait " + op_id + "`, then unfence");
  catalog::Store store(catalog_);
  auto map = store.get_map(op.map);
  std::vector<GuardedTable> tables;
  for (const auto& t : store.list_tables())
    if (t.kind == "sharded" && t.map == map.name) tables.push_back({catalog::quote_qualified(t.name), t.key_column.value_or("")});
  auto sources = source_shards(catalog_, op_id, true);
  std::map<std::int64_t, catalog::Shard> shards;
  for (const auto& s : store.list_shards()) shards[s.id] = s;
  std::vector<Unfenced> out;
  for (auto id : sources) {
    const auto& s = shards.at(id);
    shardio::RawConn conn(s.dsn, "shard " + s.name);
    bool has = conn.query("SELECT to_regclass('shardctl.guard_ranges') IS NOT NULL")[0][0] == "t";
    int fences = has ? std::stoi(conn.query("SELECT count(*) FROM shardctl.guard_ranges WHERE op_id = $1 AND state = 'fenced'",
                                            {op_id})[0][0])
                     : 0;
    if (!dry_run && has) release_guard(conn, op_id, map.id, tables, true);
    out.push_back({s.name, fences});
  }
  return out;
}

}  // namespace shardctl::migrate
