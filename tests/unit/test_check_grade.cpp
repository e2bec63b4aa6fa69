// Severity grading from [check], and report -> status -> exit code (shardctl(1), EXIT STATUS).
#include <doctest/doctest.h>

#include <algorithm>

#include "check/finding.hpp"

using namespace shardctl;
using namespace shardctl::check;

namespace {
Finding finding(Kind k, std::int64_t count, std::string shard = "shard_1") {
  Finding f;
  f.kind = k;
  f.count = count;
  f.shard = std::move(shard);
  return f;
}
}  // namespace

TEST_CASE("every finding kind is one the config may name, and the other way round") {
  std::size_t n = 0;
  for (Kind k : all_kinds) {
    auto name = to_text(k);
    CHECK(std::find(std::begin(config::check_finding_kinds), std::end(config::check_finding_kinds), name) !=
          std::end(config::check_finding_kinds));
    ++n;
  }
  CHECK(n == std::size(config::check_finding_kinds));
}

TEST_CASE("default severities and overrides") {
  std::vector<Finding> fs{finding(Kind::orphans, 3), finding(Kind::leftover_guard, 1), finding(Kind::strays, 2)};
  config::CheckConfig cfg;
  grade(fs, cfg);
  CHECK(fs[0].severity == Severity::critical);
  CHECK(fs[1].severity == Severity::warning);
  CHECK(fs[2].severity == Severity::critical);

  cfg.warning = {"orphans", "strays"};
  cfg.critical = {"leftover_guard"};
  grade(fs, cfg);
  CHECK(fs[0].severity == Severity::warning);
  CHECK(fs[1].severity == Severity::critical);
  CHECK(fs[2].severity == Severity::warning);
}

TEST_CASE("row counts escalate a warning to critical at the configured threshold") {
  config::CheckConfig cfg;
  cfg.warning = {"orphans", "strays"};
  cfg.orphans_critical_at = 100;
  cfg.strays_critical_at = 5;
  std::vector<Finding> fs{finding(Kind::orphans, 99), finding(Kind::orphans, 100), finding(Kind::strays, 4),
                          finding(Kind::strays, 5)};
  grade(fs, cfg);
  CHECK(fs[0].severity == Severity::warning);
  CHECK(fs[1].severity == Severity::critical);
  CHECK(fs[2].severity == Severity::warning);
  CHECK(fs[3].severity == Severity::critical);
}

TEST_CASE("ignored kinds are dropped") {
  config::CheckConfig cfg;
  cfg.ignore = {"expired_lease"};
  std::vector<Finding> fs{finding(Kind::expired_lease, 1), finding(Kind::orphans, 1)};
  grade(fs, cfg);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].kind == Kind::orphans);
}

TEST_CASE("status and exit code") {
  Report r;
  CHECK(status_of(r) == Status::ok);
  CHECK(exit_code_of(status_of(r)) == 0);

  Finding w = finding(Kind::leftover_guard, 1);
  w.severity = Severity::warning;
  r.findings.push_back(w);
  CHECK(status_of(r) == Status::warning);
  CHECK(exit_code_of(status_of(r)) == 1);

  r.unreachable.push_back({"shard_9", "connection refused"});
  CHECK(status_of(r) == Status::unknown);
  CHECK(exit_code_of(status_of(r)) == 3);

  Finding c = finding(Kind::orphans, 12);
  c.severity = Severity::critical;
  r.findings.push_back(c);
  CHECK(status_of(r) == Status::critical);
  CHECK(exit_code_of(status_of(r)) == 2);

  Report only_down;
  only_down.unreachable.push_back({"shard_9", "x"});
  CHECK(exit_code_of(status_of(only_down)) == 3);
}

TEST_CASE("after a fix, the status is what is left, not what was found") {
  Report r;
  Finding c = finding(Kind::orphans, 12);
  c.severity = Severity::critical;
  r.findings.push_back(c);
  CHECK(status_of(r) == Status::critical);
  r.left.emplace();
  CHECK(status_of(r) == Status::ok);
  Finding w = finding(Kind::reference_tie, 1);
  w.severity = Severity::warning;
  r.left->push_back(w);
  CHECK(status_of(r) == Status::warning);
  r.unreachable.push_back({"shard_9", "connection refused"});
  CHECK(status_of(r) == Status::unknown);
}

TEST_CASE("totals sum counts per kind in kind order") {
  Report r;
  r.findings = {finding(Kind::orphans, 5), finding(Kind::orphans, 7, "shard_2"), finding(Kind::strays, 1)};
  auto t = totals(r);
  REQUIRE(t.size() == std::size(all_kinds));
  CHECK(t[0].first == Kind::orphans);
  CHECK(t[0].second == 12);
  CHECK(t[1].second == 1);
  CHECK(t[2].second == 0);
}
