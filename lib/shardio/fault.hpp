// Fault injection for crash tests, compiled into every build (it costs one string compare per
// step boundary). SHARDCTL_FAULT="STEP" or "STEP:N" makes the process _exit(99) the Nth time
// (default: the first) it reaches the step boundary named STEP; SHARDCTL_FAULT_TRACE=FILE
// appends every boundary reached ("STEP N" per line), so a test can enumerate them all and
// kill at each. SHARDCTL_FAULT_PAUSE="STEP:N" instead stops the process there (SIGSTOP), so a
// test can act while it is frozen (cut its catalog session, take the operation over) and then
// let it go on (SIGCONT). Testing aids: never set these in production.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace shardctl::shardio {

class FaultInjector {
 public:
  FaultInjector();  // reads the environment once
  // Marks a step boundary; may end the process.
  void point(std::string_view step);

 private:
  std::optional<std::string> fail_step_, pause_step_;
  int fail_occurrence_ = 1, pause_occurrence_ = 1;
  std::optional<std::string> trace_file_;
  std::map<std::string, int, std::less<>> seen_;
};

}  // namespace shardctl::shardio
