#include "check/check.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "check/cascade.hpp"
#include "check/catalog_view.hpp"
#include "check/catalog_checks.hpp"
#include "check/fix_lock.hpp"
#include "check/fleet.hpp"
#include "check/journal.hpp"
#include "check/references.hpp"
#include "check/rehome.hpp"
#include "check/shard_sweep.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/words.hpp"

namespace shardctl::check {

namespace {

// The kind of fix a --fix mode (not report) journals.
FixKind fix_kind_of(FixMode mode) noexcept {
  switch (mode) {
    case FixMode::quarantine: return FixKind::quarantine;
    case FixMode::remove: return FixKind::remove;
    case FixMode::rehome:
    case FixMode::report: break;
  }
  return FixKind::rehome;
}

// The shards a run reads: every shard not marked offline (an offline shard is expected to be
// unreachable; mappings to it are a finding of their own).
std::vector<const catalog::Shard*> swept_shards(const Fleet& fleet) {
  std::vector<const catalog::Shard*> out;
  for (const auto& s : fleet.shards)
    if (s.status != catalog::ShardStatus::offline) out.push_back(&s);
  return out;
}

// Runs `work` for every shard on at most `parallel` threads; each thread opens its own
// connections. A shard that cannot be reached is recorded, not fatal; any other error stops
// the run once every thread is done.
template <class Work>
std::vector<ShardOutcome> for_each_shard(const std::vector<const catalog::Shard*>& shards, int parallel, Work work) {
  std::vector<ShardOutcome> outcomes(shards.size());
  // An unreachable shard is that shard's finding; any other error ends the check.
  parallel_for(shards.size(), parallel, [&](std::size_t i) {
    try {
      outcomes[i] = work(*shards[i]);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unavailable) throw;
      outcomes[i].unreachable.push_back({shards[i]->name, e.what(), refused_for_connections(e)});
    }
  });
  return outcomes;
}

void merge(std::vector<ShardOutcome>& outcomes, Report& report) {
  std::set<std::string> down;
  for (auto& o : outcomes) {
    for (auto& f : o.findings) report.findings.push_back(std::move(f));
    for (auto& u : o.unreachable)
      if (down.insert(u.shard).second) report.unreachable.push_back(std::move(u));
    for (auto& u : o.undetermined) report.undetermined.push_back(std::move(u));
    for (auto& a : o.fixes) report.fixes.push_back(std::move(a));
  }
}


// The same kinds swept again, changing nothing: what the fix left (rows it could not fix, and
// whatever it does not fix: map consistency, references) is what the run's status reports.
// Costs a second sweep, only in runs that changed rows.
void report_what_is_left(pg::Connection& catalog, const Options& options, const config::CheckConfig& cfg, Report& report) {
  Options again = options;
  again.fix = FixMode::report;
  Report after = run_check(catalog, again, cfg);
  report.left = std::move(after.findings);
  for (auto& u : after.unreachable)
    if (std::none_of(report.unreachable.begin(), report.unreachable.end(), [&](const Unreachable& r) { return r.shard == u.shard; }))
      report.unreachable.push_back(std::move(u));
  for (auto& u : after.undetermined) report.undetermined.push_back(std::move(u));
}

}  // namespace

Report run_check(pg::Connection& catalog, const Options& options, const config::CheckConfig& cfg) {
  if (options.fix == FixMode::rehome && !options.strays)
    throw usage_error("--fix rehome moves strays; it needs --strays (or no kind flag)");
  // Operations touched from this moment on are left out of every shard's results.
  std::string since = catalog_now(catalog);
  // The sweeps read the catalog through `views`, on this one connection.
  CatalogViews views(catalog, since);
  auto initial = views.current();
  const Fleet& fleet = *initial;
  // Taken before any row is read, held until the run ends: no move of these maps runs while
  // the fix decides and changes anything.
  std::optional<FixLock> lock;
  if (options.fix != FixMode::report && !options.dry_run) lock.emplace(catalog, fleet);
  Report report;
  for (Kind k : all_kinds) {
    bool sweeps = options.orphans || options.strays || options.map_consistency;
    bool on = k == Kind::orphans ? options.orphans
              : k == Kind::strays ? options.strays
              : is_reference(k) ? options.references
              : k == Kind::missing_table ? sweeps  // every sweep needs the tables, so it always reports them
                                         : options.map_consistency;
    if (on) report.checked.push_back(k);
  }
  auto shards = swept_shards(fleet);
  for (const auto* s : shards) report.shards.push_back(s->name);
  if (options.map_consistency) report.findings = catalog_findings(catalog, fleet);

  // Quarantine and delete run inside the sweep (per batch); rehome runs after it.
  Options sweep_options = options;
  if (options.fix == FixMode::rehome) sweep_options.fix = FixMode::report;
  if (options.orphans || options.strays || options.map_consistency) {
    // --parallel sweeps, each holding its shard's connection, on a pool of one more per server:
    // the room for a cross-shard probe or a fix batch while every sweep holds one
    // (shard_sweep.hpp).
    shardio::ServerPool pool(options.parallel + 1);
    auto outcomes = for_each_shard(shards, options.parallel, [&](const catalog::Shard& shard) {
      return ShardSweep(shard, sweep_options, initial, views, pool).run();
    });
    merge(outcomes, report);
  }
  if (options.references) compare_references(catalog, shards, options, report);
  grade(report.findings, cfg);
  // Rehome routes with the catalog as it is now, leaving out operations touched since `since`.
  if (options.fix == FixMode::rehome) {
    Fleet now = load_fleet(catalog, since);
    carry_exclusions(fleet, now);
    rehome_strays(now, options, report);
  }
  if (options.fix != FixMode::report && !options.dry_run && !report.fixes.empty()) {
    report.operation = journal_fixes(catalog, fix_kind_of(options.fix), report);
    report_what_is_left(catalog, options, cfg, report);
  }
  return report;
}

Report restore_quarantined(pg::Connection& catalog, const Options& options) {
  Fleet fleet = load_fleet(catalog);
  // Restored rows land in sharded tables: not while a move of their map runs.
  std::optional<FixLock> lock;
  if (!options.dry_run) lock.emplace(catalog, fleet);
  Report report;
  auto shards = swept_shards(fleet);
  for (const auto* s : shards) report.shards.push_back(s->name);
  shardio::ServerPool pool(options.parallel);
  auto outcomes = for_each_shard(shards, options.parallel, [&](const catalog::Shard& shard) {
    ShardOutcome out;
    auto conn = pool.acquire(shard.dsn, "shard " + shard.name);
    for (const auto& t : restore_quarantine(*conn, options.dry_run))
      out.fixes.push_back({FixKind::restore, shard.name, t.table, "", t.rows, options.dry_run, "from " + std::string(quarantine_schema)});
    return out;
  });
  merge(outcomes, report);
  if (!options.dry_run && !report.fixes.empty()) report.operation = journal_fixes(catalog, FixKind::restore, report);
  return report;
}

}  // namespace shardctl::check
