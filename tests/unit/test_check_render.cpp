// The Nagios line and the Prometheus textfile are contracts with monitoring systems.
#include <doctest/doctest.h>

#include <sstream>

#include "check/render.hpp"

using namespace shardctl::check;

namespace {
Finding orphans(const std::string& shard, std::int64_t n) {
  Finding f;
  f.kind = Kind::orphans;
  f.severity = Severity::critical;
  f.shard = shard;
  f.table = "public.order_lines";
  f.object = "order_lines_order";
  f.count = n;
  f.samples = {"1,2"};
  return f;
}
}  // namespace

TEST_CASE("nagios: one line, status, grouped phrases, perfdata for every kind") {
  Report r;
  r.checked = {Kind::orphans, Kind::strays};
  r.shards = {"shard_1", "shard_2", "shard_3"};
  r.findings = {orphans("shard_1", 5), orphans("shard_2", 7)};
  CHECK(nagios_line(r) ==
        "SHARDCTL CRITICAL - 12 orphaned order_lines on 2 shards | orphans=12 strays=0 overlapping_mappings=0 "
        "unmapped_keys=0 mapping_unknown_shard=0 mapping_offline_shard=0 mapping_readonly_shard=0 "
        "offline_mapping=0 leftover_guard=0 expired_lease=0 missing_table=0 leftover_slot=0 leftover_replication=0 reference_differs=0 "
        "reference_tie=0 reference_drift=0 unreachable_shards=0");
}

TEST_CASE("nagios: ok, warning and unknown lines") {
  Report r;
  r.shards = {"a", "b"};
  CHECK(nagios_line(r).rfind("SHARDCTL OK - no findings on 2 shards | orphans=0 ", 0) == 0);

  Finding g;
  g.kind = Kind::leftover_guard;
  g.severity = Severity::warning;
  g.count = 1;
  g.detail = "a detail\nwith | odd characters";
  r.findings.push_back(g);
  CHECK(nagios_line(r).rfind("SHARDCTL WARNING - 1 left-over write guard | ", 0) == 0);

  r.unreachable.push_back({"b", "no route"});
  auto line = nagios_line(r);
  CHECK(line.rfind("SHARDCTL UNKNOWN - shard b unreachable, 1 left-over write guard | ", 0) == 0);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("unreachable_shards=1") != std::string::npos);
}

TEST_CASE("nagios: critical phrases come before warnings, strays read as rows") {
  Report r;
  r.shards = {"s1"};
  Finding g;
  g.kind = Kind::expired_lease;
  g.severity = Severity::warning;
  g.count = 2;
  Finding s;
  s.kind = Kind::strays;
  s.severity = Severity::critical;
  s.shard = "s1";
  s.table = "sales.orders";
  s.count = 1;
  r.findings = {g, s};
  CHECK(nagios_line(r).rfind(
            "SHARDCTL CRITICAL - 1 stray sales.orders row on 1 shard, 2 operations with an expired lease | ", 0) == 0);
}

TEST_CASE("prometheus: zero-filled gauges per kind and shard, reachability, status, timestamp") {
  Report r;
  r.checked = {Kind::orphans, Kind::unmapped_keys};
  r.shards = {"shard_1", "shard_\"2"};
  r.findings = {orphans("shard_1", 5)};
  r.unreachable.push_back({"shard_\"2", "down"});
  std::string text = prometheus_text(r, 1700000000.5);
  CHECK(text.find("# TYPE shardctl_check_findings gauge\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"orphans\",shard=\"shard_1\"} 5\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"orphans\",shard=\"shard_\\\"2\"} 0\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"unmapped_keys\",shard=\"\"} 0\n") != std::string::npos);
  CHECK(text.find("shardctl_check_shard_up{shard=\"shard_1\"} 1\n") != std::string::npos);
  CHECK(text.find("shardctl_check_shard_up{shard=\"shard_\\\"2\"} 0\n") != std::string::npos);
  CHECK(text.find("shardctl_check_status 2\n") != std::string::npos);
  CHECK(text.find("shardctl_check_last_run_timestamp_seconds 1700000000.500\n") != std::string::npos);
  CHECK(text.find("kind=\"strays\"") == std::string::npos);  // not checked, not exported
}

TEST_CASE("json: top-level status, summary and findings") {
  Report r;
  r.checked = {Kind::orphans};
  r.shards = {"shard_1"};
  r.findings = {orphans("shard_1", 3)};
  auto j = to_json(r);
  CHECK(j["status"] == "critical");
  CHECK(j["exit_code"] == 2);
  CHECK(j["summary"]["orphans"] == 3);
  CHECK(j["summary"]["strays"] == 0);
  CHECK(j["findings"][0]["table"] == "public.order_lines");
  CHECK(j["findings"][0]["samples"][0] == "1,2");
  std::ostringstream text;
  print_text(text, r);
  CHECK(text.str().find("status: CRITICAL") != std::string::npos);
}

TEST_CASE("reference findings: grouped per table in Nagios; the tie's gauge zero-filled without a shard") {
  Report r;
  r.checked = {Kind::reference_differs, Kind::reference_tie, Kind::reference_drift};
  r.shards = {"shard_1", "shard_2"};
  Finding d;
  d.kind = Kind::reference_differs;
  d.severity = Severity::critical;
  d.shard = "shard_2";
  d.table = "public.product";
  d.count = 3;
  r.findings = {d};
  CHECK(nagios_line(r).rfind("SHARDCTL CRITICAL - 3 differing product rows on 1 shard | ", 0) == 0);
  std::string text = prometheus_text(r, 0);
  CHECK(text.find("shardctl_check_findings{kind=\"reference_differs\",shard=\"shard_2\"} 3\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"reference_differs\",shard=\"shard_1\"} 0\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"reference_tie\",shard=\"\"} 0\n") != std::string::npos);
  CHECK(text.find("shardctl_check_findings{kind=\"reference_differs\",shard=\"\"}") == std::string::npos);
}
