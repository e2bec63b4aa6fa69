#include "migrate/fault.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace shardctl::migrate {

FaultInjector::FaultInjector() {
  if (const char* f = std::getenv("SHARDCTL_FAULT"); f && *f) {
    std::string spec = f;
    auto colon = spec.rfind(':');
    if (colon != std::string::npos) {
      fail_occurrence_ = std::atoi(spec.c_str() + colon + 1);
      spec.resize(colon);
    }
    fail_step_ = spec;
  }
  if (const char* t = std::getenv("SHARDCTL_FAULT_TRACE"); t && *t) trace_file_ = t;
}

void FaultInjector::point(std::string_view step) {
  if (!fail_step_ && !trace_file_) return;
  int n = ++seen_[std::string(step)];
  if (trace_file_) std::ofstream(*trace_file_, std::ios::app) << step << ' ' << n << '\n';
  if (fail_step_ && *fail_step_ == step && n == fail_occurrence_) _exit(99);  // no cleanup: a crash
}

}  // namespace shardctl::migrate
