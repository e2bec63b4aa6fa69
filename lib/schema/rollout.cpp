#include "schema/rollout.hpp"

#include <map>
#include <set>

#include "core/error.hpp"
#include "schema/history.hpp"
#include "schema/indexes.hpp"
#include "schema/lock.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::schema {
namespace {

std::map<std::string, std::size_t> index_of(const std::vector<fanout::Target>& targets) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < targets.size(); ++i) out[targets[i].shard] = i;
  return out;
}

// Thrown by a wave's work so the executor stops starting shards (the report already says why).
struct StopWave : Error {
  StopWave() : Error(ErrorKind::internal, "stop") {}
};

// Runs apply_shard over `targets` (a wave). `stop`: a failed or locked shard stops the wave;
// `stop_on_any`: so does an unreachable one (the canary wave).
// `seen_invalid`: the shards where the survey found an INVALID index of a file (apply_shard's
// check_applied).
void run_wave(shardio::ServerPool& pool, const std::vector<fanout::Target>& targets, const std::vector<Migration>& migrations,
              const ApplyOptions& options, bool stop, bool stop_on_any, const std::set<std::string>& seen_invalid,
              std::vector<ShardReport>& reports) {
  auto idx = index_of(targets);
  reports.resize(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) reports[i].shard = targets[i].shard;
  fanout::Policy policy;
  policy.parallel = options.parallel;
  policy.stop_on_failure = stop;
  fanout::run(
      targets, policy,
      [&](const fanout::Target& t) {
        auto& rep = reports[idx.at(t.shard)];
        rep = apply_shard(pool, t, migrations, options.settings, seen_invalid.count(t.shard) > 0);
        // An unreachable shard ran nothing: it catches up on the next run and does not stop the
        // others (except in the canary wave, which proves nothing without all its shards).
        if (rep.state == ShardState::failed || rep.state == ShardState::locked || (stop_on_any && !rep.ok())) throw StopWave();
      },
      [&](const fanout::Target& t, const fanout::Outcome&) {
        if (options.on_shard) options.on_shard(reports[idx.at(t.shard)]);
      });
}

// A run's exit code from the states its shards ended in, the worst first: a shard in `failing`
// (a migration failed, a repair refused) gives `failed_code`, then a locked shard 75, then an
// unreachable one 69; else 0. (apply, baseline and repair.)
// A shard not reached because its server was out of connection slots counts as unreachable.
constexpr bool is_refused(ShardState s) noexcept { return s == ShardState::refused; }
constexpr bool is_refused(RepairState) noexcept { return false; }  // its "refused" is a repair's refusal

template <class Report, class State>
int worst_exit_code(const std::vector<Report>& reports, State failing, int failed_code) {
  bool failed = false, locked = false, unreachable = false;
  for (const auto& r : reports) {
    failed = failed || r.state == failing;
    locked = locked || r.state == State::locked;
    unreachable = unreachable || r.state == State::unreachable || is_refused(r.state);
  }
  return failed ? failed_code : locked ? exit_code::locked : unreachable ? exit_code::unavailable : 0;
}

int apply_exit_code(const std::vector<ShardReport>& reports) {
  return worst_exit_code(reports, ShardState::failed, apply_exit::migration_failed);
}

// What apply would do on a shard, from the survey; its edited applied files go to `changed`
// (file -> shards).
PlannedShard planned_shard(const std::vector<Migration>& migrations, const ShardHistory& h,
                           std::map<std::string, std::vector<std::string>>& changed) {
  PlannedShard p;
  p.shard = h.shard;
  if (!h.rows) {
    p.state = h.refused ? PlannedState::refused : PlannedState::unreachable;
    p.error = h.error;
    return p;
  }
  auto plan = plan_shard(migrations, *h.rows);
  for (const auto& c : plan.changed) changed[c.file].push_back(h.shard);
  if (plan.current) p.version = plan.current->text();
  for (auto k : plan.pending) p.pending.push_back(migrations[k].file);
  p.out_of_order = plan.out_of_order;
  p.unknown = plan.unknown;
  p.failed = plan.failed;
  p.started = plan.started;
  p.invalid_indexes = h.invalid_indexes;
  // As `status` says it: a file at work (the lock held) builds an index that is INVALID meanwhile.
  p.state = !p.started.empty() ? (h.lock_held ? PlannedState::running : PlannedState::interrupted)
            : !p.invalid_indexes.empty() ? PlannedState::invalid_index
            : p.pending.empty()          ? PlannedState::up_to_date
                                         : PlannedState::pending;
  return p;
}

// Refuses every edited applied file before anything runs, naming all of them and their shards.
void refuse_changed(const std::map<std::string, std::vector<std::string>>& changed) {
  if (changed.empty()) return;
  std::string msg;
  for (const auto& [file, shards] : changed) {
    if (!msg.empty()) msg += "; ";
    msg += file + " was changed after it was applied (on ";
    for (std::size_t k = 0; k < shards.size(); ++k) {
      if (k == 3) {
        msg += " and " + std::to_string(shards.size() - 3) + " more";
        break;
      }
      msg += (k ? ", " : "") + shards[k];
    }
    msg += ")";
  }
  throw data_error(msg + "; nothing was applied",
                   "restore the applied file (git checkout) and put the change in a new V<next>__ file; "
                   "`shardctl schema status DIR` shows which shards have which checksum");
}

// What apply would answer where a dry run can tell: a shard it would stop at fails it.
int dry_run_exit_code(const std::vector<PlannedShard>& plan) {
  bool unreachable = false, stops = false;
  for (const auto& p : plan) {
    unreachable = unreachable || p.state == PlannedState::unreachable || p.state == PlannedState::refused;
    stops = stops || p.state == PlannedState::interrupted || p.state == PlannedState::invalid_index;
  }
  return stops ? apply_exit::migration_failed : unreachable ? exit_code::unavailable : 0;
}

// The canary wave (the first `options.canary` reachable shards), then the rest, which are
// skipped when the canary wave failed. The reports of both waves.
std::vector<ShardReport> run_waves(shardio::ServerPool& pool, const std::vector<fanout::Target>& reachable,
                                   const std::vector<Migration>& migrations, const ApplyOptions& options,
                                   const std::set<std::string>& seen_invalid, ApplyResult& result) {
  std::size_t k = static_cast<std::size_t>(std::max(0, options.canary));
  k = std::min(k, reachable.size());
  result.canary = static_cast<int>(k);
  std::vector<fanout::Target> canary(reachable.begin(), reachable.begin() + static_cast<std::ptrdiff_t>(k));
  std::vector<fanout::Target> rest(reachable.begin() + static_cast<std::ptrdiff_t>(k), reachable.end());
  std::vector<ShardReport> first, second;
  if (!canary.empty()) {
    run_wave(pool, canary, migrations, options, true, true, seen_invalid, first);
    for (const auto& r : first) result.canary_failed = result.canary_failed || !r.ok();
  }
  if (!result.canary_failed) {
    run_wave(pool, rest, migrations, options, !options.continue_on_error, false, seen_invalid, second);
  } else {
    for (const auto& t : rest) {
      ShardReport r;
      r.shard = t.shard;
      second.push_back(r);  // skipped: the canary wave failed
      if (options.on_shard) options.on_shard(r);
    }
  }
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

// The reports in target order. A shard that never started says what it would have run, from
// the survey; a shard the survey found unreachable (in no wave) is reported as it was found.
std::vector<ShardReport> in_target_order(const std::vector<fanout::Target>& targets, const std::vector<ShardHistory>& histories,
                                         const std::vector<PlannedShard>& plan, const std::vector<ShardReport>& ran,
                                         const ApplyOptions& options) {
  std::map<std::string, const ShardReport*> by_shard;
  for (const auto& r : ran) by_shard[r.shard] = &r;
  std::vector<ShardReport> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (auto it = by_shard.find(targets[i].shard); it != by_shard.end()) {
      out.push_back(*it->second);
      auto& r = out.back();
      if (r.state == ShardState::skipped) {
        r.planned = plan[i].pending;
        r.version_before = r.version_after = plan[i].version;
      }
      continue;
    }
    ShardReport r;
    r.shard = targets[i].shard;
    r.state = histories[i].refused ? ShardState::refused : ShardState::unreachable;
    r.error = histories[i].error;
    // A shard that answered but whose history cannot be read stays so until someone looks:
    // the next apply would stop there again.
    r.hint = histories[i].reached
                 ? "nothing ran there: its shardctl.schema_history could not be read; repair it, then apply again"
                 : "nothing ran there; the next `shardctl schema apply` catches it up";
    if (options.on_shard) options.on_shard(r);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<ShardHistory> survey(shardio::ServerPool& pool, const std::vector<fanout::Target>& targets, int parallel,
                                 int connect_timeout, const std::vector<Migration>* files) {
  std::vector<ShardHistory> out(targets.size());
  auto idx = index_of(targets);
  for (std::size_t i = 0; i < targets.size(); ++i) out[i].shard = targets[i].shard;
  fanout::Policy policy;
  policy.parallel = parallel;
  auto outcomes = fanout::run(targets, policy, [&](const fanout::Target& t) {
    auto conn = pool.acquire(rollout_dsn(t, connect_timeout), "shard " + t.shard);
    auto& h = out[idx.at(t.shard)];
    h.rows = read_history(*conn);
    h.lock_held = rollout_lock_held(*conn);
    if (files) h.invalid_indexes = invalid_file_indexes(*conn, *files);
  });
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].ok()) {
      // Not only unreachable ones: a shard whose history cannot be read is not known either.
      out[i].rows.reset();
      out[i].error = outcomes[i].error;
      out[i].reached = !fanout::not_reached(outcomes[i].state);
      out[i].refused = outcomes[i].state == fanout::State::refused;
    }
  return out;
}

ApplyResult apply(const std::vector<fanout::Target>& targets, const std::vector<Migration>& migrations,
                  const ApplyOptions& options) {
  ApplyResult result;
  result.dry_run = options.dry_run;
  for (const auto& m : migrations)
    if (m.version) result.head = m.version->text();
  // One pool for the survey and the waves: at most --parallel connections per server, and a
  // shard's survey connection, while still idle, serves its apply.
  shardio::ServerPool pool(options.parallel);
  auto histories = survey(pool, targets, options.parallel, options.settings.connect_timeout, &migrations);
  std::map<std::string, std::vector<std::string>> changed;  // file -> shards
  for (const auto& h : histories) result.plan.push_back(planned_shard(migrations, h, changed));
  refuse_changed(changed);
  if (options.dry_run) {
    result.exit_code = dry_run_exit_code(result.plan);
    return result;
  }
  // Unreachable shards ran nothing: they are reported as the survey found them.
  std::vector<fanout::Target> reachable;
  std::set<std::string> seen_invalid;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (histories[i].rows) reachable.push_back(targets[i]);
    if (!histories[i].invalid_indexes.empty()) seen_invalid.insert(targets[i].shard);
  }
  auto ran = run_waves(pool, reachable, migrations, options, seen_invalid, result);
  result.shards = in_target_order(targets, histories, result.plan, ran, options);
  result.exit_code = apply_exit_code(result.shards);
  return result;
}

BaselineResult baseline(const std::vector<fanout::Target>& targets, const Version& version,
                        const std::vector<Migration>& files, int parallel, bool dry_run, const RunSettings& settings) {
  BaselineResult result;
  result.version = version.text();
  for (const auto& f : files) result.files.push_back(f.file);
  shardio::ServerPool pool(parallel);
  auto histories = survey(pool, targets, parallel, settings.connect_timeout);
  std::vector<std::string> refused;
  std::vector<fanout::Target> reachable;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (!histories[i].rows) continue;
    bool already = false;
    auto why = baseline_refusal(*histories[i].rows, version, files, &already);
    if (!why.empty()) refused.push_back(targets[i].shard + " (" + why + ")");
    reachable.push_back(targets[i]);
  }
  if (!refused.empty()) {
    std::string msg = "baseline is for shards without a schema history; refused, nothing changed: ";
    for (std::size_t k = 0; k < refused.size(); ++k) msg += (k ? ", " : "") + refused[k];
    throw data_error(msg, "`shardctl schema status` shows the histories; choose the shards with --shards");
  }
  std::vector<ShardReport> reports(targets.size());
  auto idx = index_of(targets);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    reports[i].shard = targets[i].shard;
    if (!histories[i].rows) {
      reports[i].state = histories[i].refused ? ShardState::refused : ShardState::unreachable;
      reports[i].error = histories[i].error;
    } else if (dry_run) {
      reports[i].state = ShardState::ok;
      if (auto cur = current_version(*histories[i].rows)) reports[i].version_before = cur->text();
      reports[i].version_after = version.text();
    }
  }
  if (!dry_run) {
    fanout::Policy policy;
    policy.parallel = parallel;
    fanout::run(reachable, policy, [&](const fanout::Target& t) {
      reports[idx.at(t.shard)] = baseline_shard(pool, t, version, files, settings);
    });
  }
  result.shards = std::move(reports);
  result.exit_code = worst_exit_code(result.shards, ShardState::failed, exit_code::data);
  return result;
}

RepairResult repair(const std::vector<fanout::Target>& targets, const Migration& file, RepairMark mark, int parallel,
                    bool dry_run, const RunSettings& settings) {
  RepairResult result;
  result.file = file.file;
  result.mark = mark;
  result.dry_run = dry_run;
  std::vector<Migration> files{file};
  shardio::ServerPool pool(parallel);
  auto histories = survey(pool, targets, parallel, settings.connect_timeout, &files);
  std::vector<std::string> refused;
  std::vector<fanout::Target> reachable;
  result.shards.resize(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto& rep = result.shards[i];
    rep.shard = targets[i].shard;
    if (!histories[i].rows) {
      rep.state = RepairState::unreachable;
      rep.error = histories[i].error;
      continue;
    }
    rep.was = file_state(*histories[i].rows, file);
    bool needed = false;
    auto why = repair_refusal(*histories[i].rows, file, mark, histories[i].invalid_indexes, &needed);
    if (!why.empty()) refused.push_back(targets[i].shard + " (" + why + ")");
    if (dry_run) {
      rep.state = RepairState::ok;
      rep.recorded = needed;
    }
    reachable.push_back(targets[i]);
  }
  if (!refused.empty()) {
    std::string msg = "cannot mark " + file.file + " " + std::string(to_text(mark)) + "; refused, nothing changed: ";
    for (std::size_t k = 0; k < refused.size(); ++k) msg += (k ? "; " : "") + refused[k];
    throw data_error(msg, "`shardctl schema status DIR` shows each shard's state of the file");
  }
  if (!dry_run) {
    auto idx = index_of(targets);
    fanout::Policy policy;
    policy.parallel = parallel;
    fanout::run(reachable, policy, [&](const fanout::Target& t) {
      result.shards[idx.at(t.shard)] = repair_shard(pool, t, file, mark, settings);
    });
  }
  result.exit_code = worst_exit_code(result.shards, RepairState::refused, exit_code::data);
  return result;
}

StatusMatrix status(const std::vector<fanout::Target>& targets, const std::optional<std::vector<Migration>>& migrations,
                    int parallel, int connect_timeout) {
  shardio::ServerPool pool(parallel);
  auto histories = survey(pool, targets, parallel, connect_timeout, migrations ? &*migrations : nullptr);
  return migrations ? status_against_directory(*migrations, histories) : status_between_shards(histories);
}

}  // namespace shardctl::schema
