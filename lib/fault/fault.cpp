#include "fault/fault.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>

namespace shardctl::fault {

FaultSpec FaultSpec::parse(std::string_view text) {
  FaultSpec spec;
  // Step names and contexts (shard names, batch numbers) hold no ':' (catalog::require_name).
  if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    spec.occurrence = std::atoi(std::string(text.substr(colon + 1)).c_str());
    text = text.substr(0, colon);
  }
  if (auto at = text.find('@'); at != std::string_view::npos) {
    spec.context = std::string(text.substr(at + 1));
    text = text.substr(0, at);
  }
  spec.step = std::string(text);
  return spec;
}

std::vector<FaultSpec> FaultSpec::parse_list(std::string_view text) {
  std::vector<FaultSpec> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    if (!item.empty()) out.push_back(parse(item));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return out;
}

namespace {
std::vector<FaultSpec> read_specs(const char* name) {
  const char* v = std::getenv(name);
  return v ? FaultSpec::parse_list(v) : std::vector<FaultSpec>{};
}

bool any_matches(const std::vector<FaultSpec>& specs, std::string_view step, std::string_view context, int n_step,
                 int n_context) {
  for (const auto& s : specs) {
    if (s.step != step) continue;
    if (s.context ? (*s.context == context && s.occurrence == n_context) : s.occurrence == n_step) return true;
  }
  return false;
}
}  // namespace

FaultInjector::FaultInjector() : fail_(read_specs("SHARDCTL_FAULT")), pause_(read_specs("SHARDCTL_FAULT_PAUSE")) {
  if (const char* t = std::getenv("SHARDCTL_FAULT_TRACE"); t && *t) trace_file_ = t;
}

void FaultInjector::point(std::string_view step, std::string_view context) {
  if (fail_.empty() && pause_.empty() && !trace_file_) return;
  std::string id(step);
  int n_step = ++seen_[id];
  int n_context = n_step;
  if (!context.empty()) {
    id.append(1, '@').append(context);
    n_context = ++seen_[id];
  }
  if (trace_file_) std::ofstream(*trace_file_, std::ios::app) << id << ' ' << n_context << '\n';
  if (any_matches(fail_, step, context, n_step, n_context)) _exit(99);  // no cleanup: a crash
  if (any_matches(pause_, step, context, n_step, n_context)) raise(SIGSTOP);
}

}  // namespace shardctl::fault
