#include "shardio/fault.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>

namespace shardctl::shardio {

namespace {
// "STEP" or "STEP:N" from the environment variable `name`.
void read_spec(const char* name, std::optional<std::string>& step, int& occurrence) {
  const char* f = std::getenv(name);
  if (!f || !*f) return;
  std::string spec = f;
  auto colon = spec.rfind(':');
  if (colon != std::string::npos) {
    occurrence = std::atoi(spec.c_str() + colon + 1);
    spec.resize(colon);
  }
  step = spec;
}
}  // namespace

FaultInjector::FaultInjector() {
  read_spec("SHARDCTL_FAULT", fail_step_, fail_occurrence_);
  read_spec("SHARDCTL_FAULT_PAUSE", pause_step_, pause_occurrence_);
  if (const char* t = std::getenv("SHARDCTL_FAULT_TRACE"); t && *t) trace_file_ = t;
}

void FaultInjector::point(std::string_view step) {
  if (!fail_step_ && !pause_step_ && !trace_file_) return;
  int n = ++seen_[std::string(step)];
  if (trace_file_) std::ofstream(*trace_file_, std::ios::app) << step << ' ' << n << '\n';
  if (fail_step_ && *fail_step_ == step && n == fail_occurrence_) _exit(99);  // no cleanup: a crash
  if (pause_step_ && *pause_step_ == step && n == pause_occurrence_) raise(SIGSTOP);
}

}  // namespace shardctl::shardio
