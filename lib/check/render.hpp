// How a check report is shown: a text summary table, one JSON document, one Nagios line, and
// a Prometheus textfile-collector file. Pure functions of the report (and the clock reading
// the caller passes in), so they are unit tested.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "check/finding.hpp"

namespace shardctl::check {

void print_text(std::ostream& out, const Report& report);
nlohmann::json to_json(const Report& report);

// "SHARDCTL CRITICAL - 12 orphaned order_lines on 2 shards | orphans=12 strays=0 ..." with
// no newline: exactly one line whatever the findings.
std::string nagios_line(const Report& report);
// `text` made safe for a Nagios status line: no newline, no '|' (it starts the perfdata).
std::string one_line(std::string text);

// node_exporter textfile format: shardctl_check_findings{kind,shard} for every kind checked
// on every shard swept (zeros included, so alerts resolve), shard reachability, the status,
// and shardctl_check_last_run_timestamp_seconds = `now_seconds`.
std::string prometheus_text(const Report& report, double now_seconds);

}  // namespace shardctl::check
