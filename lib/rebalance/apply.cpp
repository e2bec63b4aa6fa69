#include "rebalance/apply.hpp"

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "core/words.hpp"
#include "migrate/online.hpp"
#include "rebalance/journal.hpp"
#include "stats/store.hpp"

namespace shardctl::rebalance {
namespace {

// How a step runs through the engine: a list map's point moves by its key; any part of a
// range or hash map moves as a merge of exactly that range into the target (a merge of part
// of a mapping moves just that part; for hash maps the range is in hash values, which
// `split --at` and `move --key` would hash again).
struct StepRun {
  bool point = false;
  std::string key_or_range;
  std::string command;
};

StepRun step_run(const planner::Step& s, routing::MapKind kind, const std::optional<int>& batch_keys) {
  StepRun r;
  r.point = kind == routing::MapKind::list;
  if (r.point) {
    r.key_or_range = routing::format_key(*s.range.low);
    r.command = "shardctl move --map " + s.map + " --key " + r.key_or_range + " --to " + s.to;
  } else {
    r.key_or_range = routing::format_range(s.range);
    r.command = "shardctl merge --map " + s.map + " --range " + r.key_or_range + " --into " + s.to;
  }
  if (batch_keys) r.command += " --batch-size " + std::to_string(*batch_keys);
  return r;
}

// The step's command line as typed by hand with --online and the apply's settings.
void add_online(StepRun& r, const std::optional<migrate::OnlineSettings>& online) {
  if (!online) return;
  r.command += " --online";
  migrate::OnlineSettings defaults;
  if (online->max_lag_seconds != defaults.max_lag_seconds) r.command += fmt::format(" --max-lag {}", online->max_lag_seconds);
  if (online->cutover_timeout_ms != defaults.cutover_timeout_ms)
    r.command += fmt::format(" --cutover-timeout {}", online->cutover_timeout_ms / 1000.0);
}

// The step's operation, planned as `run.command` typed by hand would plan it: the same request,
// batched by the same rule (migrate::batch_sizing).
migrate::Plan plan_step(migrate::Engine& engine, const planner::Step& s, const StepRun& run, const ApplyOptions& o) {
  migrate::Plan plan;
  if (run.point) {
    migrate::MoveRequest req{s.map, run.key_or_range, s.to};
    migrate::batch_sizing(o.batch_keys, req.batch_size, req.batch_bytes);
    plan = engine.plan_move(req);
  } else {
    migrate::MergeRequest req{s.map, run.key_or_range, s.to};
    migrate::batch_sizing(o.batch_keys, req.batch_size, req.batch_bytes);
    plan = engine.plan_merge(req);
  }
  if (o.online) {
    plan.online = o.online;
    engine.check_online(plan);
  }
  return plan;
}

bool shares_shard(const planner::Step& a, const planner::Step& b) {
  return a.from == b.from || a.from == b.to || a.to == b.from || a.to == b.to;
}

// Runs (or resumes) one step on its own catalog connection; journals every change of state.
void run_step(const PlanFile& pf, std::size_t i, const JournalStep& js, routing::MapKind kind, const ApplyOptions& o,
              StepResult& out) {
  const auto& s = pf.plan.steps[i];
  pg::Connection cat(o.catalog_dsn, "catalog");
  migrate::Engine engine(cat, o.engine);
  std::string op = js.op_id;
  if (op.empty())
    if (auto found = find_step_operation(cat, pf.fingerprint, i + 1)) op = *found;
  journal::OpStatus st;
  if (!op.empty()) {
    st = engine.status(op);
    if (st.status == journal::OperationStatus::cancelled) op.clear();  // cancelled by an operator: plan what is left afresh
  }
  if (op.empty()) {
    auto run = step_run(s, kind, o.batch_keys);
    add_online(run, o.online);
    migrate::Plan p = plan_step(engine, s, run, o);
    p.args["rebalance"] = {{"plan", pf.fingerprint}, {"step", i + 1}};
    set_step(cat, pf.fingerprint, i + 1, StepStatus::running, "");
    op = engine.start(p);
    set_step(cat, pf.fingerprint, i + 1, StepStatus::running, op);
    if (o.note) o.note("step " + std::to_string(i + 1) + ": operation " + op + ": " + run.command);
    st = engine.run(op);
  } else if (st.status != journal::OperationStatus::done) {
    set_step(cat, pf.fingerprint, i + 1, StepStatus::running, op);
    if (o.note) o.note("step " + std::to_string(i + 1) + ": resuming operation " + op);
    st = engine.run(op);
  }
  out.op_id = op;
  out.rows = st.rows_moved;
  if (st.status != journal::OperationStatus::done)
    throw Error(ErrorKind::internal, "step " + std::to_string(i + 1) + ": operation " + op + " ended " + std::string(journal::to_text(st.status)),
                "`shardctl op show " + op + "` says why; run the same apply again to continue");
  set_step(cat, pf.fingerprint, i + 1, StepStatus::done, op);
  out.status = StepOutcome::done;
}

// --dry-run: previews every step still to run against the fleet as it is now; changes nothing.
void preview_steps(pg::Connection& catalog, const PlanFile& pf, const std::vector<routing::MapKind>& kinds,
                   const std::vector<JournalStep>& journal, const ApplyOptions& o, ApplyResult& result) {
  migrate::Engine engine(catalog, o.engine);
  const auto& steps = pf.plan.steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    auto& r = result.steps[i];
    if (r.status == StepOutcome::skipped) continue;
    std::optional<std::size_t> after;
    for (std::size_t j = 0; j < i && !after; ++j)
      if (result.steps[j].status != StepOutcome::skipped && steps[j].map == steps[i].map &&
          routing::ranges_overlap(steps[j].range, steps[i].range))
        after = j;
    if (after) {
      r.status = StepOutcome::would_run_after;
      r.after = *after + 1;
      continue;
    }
    try {
      if (!journal[i].op_id.empty()) {
        auto st = engine.preview_run(journal[i].op_id);
        if (st.status != journal::OperationStatus::cancelled) {
          r.status = StepOutcome::would_resume;
          continue;
        }
      }
      auto run = step_run(steps[i], kinds[i], o.batch_keys);
      add_online(run, o.online);
      migrate::Plan p = plan_step(engine, steps[i], run, o);
      engine.start(p, true);
      r.batches = static_cast<int>(p.batches.size());
      r.rows = p.rows_total;
    } catch (const Error& e) {
      r.status = StepOutcome::would_fail;
      r.error = e.what();
      if (!result.preview_error) result.preview_error = std::current_exception();
    }
  }
}

// A plan is made for the maps and stats as they were: before its first step runs, a map whose
// version moved since, or stats older than --max-age, refuse it (its own steps change the maps).
void refuse_changed_maps(pg::Connection& catalog, const PlanFile& pf) {
  for (const auto& m : pf.maps) {
    auto now = stats::map_version(catalog, m.name);
    if (now != m.version)
      throw data_error("map " + m.name + " changed since the plan was made: planned at version " + std::to_string(m.version) +
                           ", now at version " + std::to_string(now),
                       "make a new plan: shardctl stats collect, then shardctl rebalance plan");
  }
}

void refuse_old_stats(pg::Connection& catalog, const PlanFile& pf, std::chrono::milliseconds max_age) {
  double age = 0;
  catalog.read([&](pqxx::work& tx) {
    age = tx.exec_params1("SELECT extract(epoch FROM now() - $1::timestamptz)::float8", pf.taken_at)[0].as<double>();
  });
  double limit = static_cast<double>(max_age.count()) / 1000.0;
  if (age > limit)
    throw data_error("the plan's stats (snapshot " + std::to_string(pf.snapshot_id) + ", taken " + pf.taken_at + ") are " +
                         std::to_string(static_cast<long long>(age)) + " s old, older than --max-age (" +
                         std::to_string(static_cast<long long>(limit)) + " s)",
                     "collect again and make a new plan: shardctl stats collect, then shardctl rebalance plan");
}

// Each step as this apply starts it: its command, and skipped when the journal has it done or
// nothing changes shard; the rest pending (would run, with --dry-run).
std::vector<StepResult> step_results(const PlanFile& pf, const std::vector<routing::MapKind>& kinds,
                                     const std::vector<JournalStep>& journal, const ApplyOptions& o) {
  std::vector<StepResult> out;
  const auto& steps = pf.plan.steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    StepResult r;
    r.step = i + 1;
    r.kind = to_text(s.kind);
    r.map = s.map;
    r.from = s.from;
    r.to = s.to;
    auto run = step_run(s, kinds[i], o.batch_keys);
    add_online(run, o.online);
    r.range = run.key_or_range;
    r.command = run.command;
    r.op_id = journal[i].op_id;
    r.status = journal[i].status == StepStatus::done ? StepOutcome::skipped
               : o.dry_run                             ? StepOutcome::would_run
                                                       : StepOutcome::pending;
    if (s.from == s.to) r.status = StepOutcome::skipped;  // nothing changes shard
    out.push_back(std::move(r));
  }
  return out;
}

// Runs the steps still to run, each on a thread of its own: a step starts once every earlier
// step sharing one of its shards is done, at most `parallel` at once, never two on one shard.
// After a failure no step starts; the ones running finish, then the first failure is rethrown.
class StepScheduler {
 public:
  StepScheduler(const PlanFile& pf, const std::vector<routing::MapKind>& kinds, const std::vector<JournalStep>& journal,
                const ApplyOptions& o, ApplyResult& result)
      : pf_(pf), steps_(pf.plan.steps), kinds_(kinds), journal_(journal), o_(o), result_(result),
        state_(steps_.size(), StepState::waiting) {
    for (std::size_t i = 0; i < steps_.size(); ++i)
      if (result_.steps[i].status == StepOutcome::skipped) state_[i] = StepState::done;
  }

  void run() {
    {
      std::unique_lock lk(mu_);
      for (;;) {
        std::optional<std::size_t> pick;
        if (!first_error_ && running_ < std::max(1, o_.parallel)) pick = next_ready();
        if (pick) {
          start(*pick);
          continue;
        }
        if (running_ == 0) break;
        cv_.wait(lk);
      }
    }
    for (auto& t : threads_) t.join();
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  enum class StepState { waiting, running, done, failed };

  // The first waiting step whose shards are free and whose earlier steps on them are done.
  std::optional<std::size_t> next_ready() const {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (state_[i] != StepState::waiting) continue;
      if (busy_.count(steps_[i].from) || busy_.count(steps_[i].to)) continue;
      bool ready = true;
      for (std::size_t j = 0; j < i && ready; ++j)
        if (state_[j] != StepState::done && shares_shard(steps_[i], steps_[j])) ready = false;
      if (ready) return i;
    }
    return std::nullopt;
  }

  // Under the lock.
  void start(std::size_t i) {
    state_[i] = StepState::running;
    ++running_;
    busy_.insert(steps_[i].from);
    busy_.insert(steps_[i].to);
    threads_.emplace_back([this, i, js = journal_[i]] { finished(i, run_guarded(i, js)); });
  }

  // Runs step i; its failure is the step's (recorded in its result and journal), returned.
  std::exception_ptr run_guarded(std::size_t i, const JournalStep& js) {
    auto& out = result_.steps[i];
    try {
      run_step(pf_, i, js, kinds_[i], o_, out);
      return nullptr;
    } catch (const Error& e) {
      auto err = std::current_exception();
      out.status = StepOutcome::failed;
      out.error = e.what();
      try {
        pg::Connection cat(o_.catalog_dsn, "catalog");
        set_step(cat, pf_.fingerprint, i + 1, StepStatus::failed, out.op_id, e.what());
      } catch (...) {
      }
      return err;
    } catch (...) {
      out.status = StepOutcome::failed;
      return std::current_exception();
    }
  }

  void finished(std::size_t i, std::exception_ptr err) {
    std::lock_guard g(mu_);
    state_[i] = err ? StepState::failed : StepState::done;
    if (err && !first_error_) first_error_ = err;
    busy_.erase(steps_[i].from);
    busy_.erase(steps_[i].to);
    --running_;
    cv_.notify_all();
  }

  const PlanFile& pf_;
  const std::vector<planner::Step>& steps_;
  const std::vector<routing::MapKind>& kinds_;
  const std::vector<JournalStep>& journal_;
  const ApplyOptions& o_;
  ApplyResult& result_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StepState> state_;
  std::set<std::string> busy_;
  int running_ = 0;
  std::exception_ptr first_error_;
  std::vector<std::thread> threads_;
};

}  // namespace

std::string status_text(const StepResult& s) {
  std::string text(to_text(s.status));
  // The step it waits for is part of the words.
  if (s.status == StepOutcome::would_run_after) text += " " + std::to_string(s.after);
  return text;
}

nlohmann::json to_json(const ApplyResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"step", s.step},
                     {"kind", s.kind},
                     {"map", s.map},
                     {"from", s.from},
                     {"to", s.to},
                     {"range", s.range},
                     {"command", s.command},
                     {"operation", s.op_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.op_id)},
                     {"status", status_text(s)},
                     {"rows_moved", s.rows},
                     {"batches", s.batches},
                     {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)}});
  return {{"plan_fingerprint", r.fingerprint}, {"resumed", r.resumed}, {"steps", std::move(steps)}};
}

ApplyResult apply(pg::Connection& catalog, const PlanFile& pf, const ApplyOptions& o) {
  catalog::Store store(catalog, catalog::Writes::preview);
  if (o.batch_keys && *o.batch_keys < 1) throw usage_error("--batch-size must be at least 1");
  ApplyResult result;
  result.fingerprint = pf.fingerprint;
  result.resumed = run_exists(catalog, pf.fingerprint);
  if (!result.resumed) {
    refuse_changed_maps(catalog, pf);
    if (o.max_age) refuse_old_stats(catalog, pf, *o.max_age);
  }

  const auto& steps = pf.plan.steps;
  std::vector<routing::MapKind> kinds;
  for (const auto& s : steps) kinds.push_back(store.get_map(s.map).kind);
  std::vector<JournalStep> journal(steps.size());
  if (result.resumed) journal = read_steps(catalog, pf.fingerprint, steps.size());
  result.steps = step_results(pf, kinds, journal, o);
  if (o.dry_run) {
    preview_steps(catalog, pf, kinds, journal, o, result);
    return result;
  }

  if (!result.resumed) begin_run(catalog, pf.fingerprint, to_json(pf), steps.size());
  StepScheduler(pf, kinds, journal, o, result).run();
  finish_run(catalog, pf.fingerprint);
  return result;
}

}  // namespace shardctl::rebalance
