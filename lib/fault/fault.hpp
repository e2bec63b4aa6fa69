// Fault injection for crash tests, compiled into every build (it costs one test per step
// boundary when no variable is set). Testing aids: never set these in production.
//
// A boundary is a step name, optionally with the unit of work it concerns (its context: a
// migration batch "b3", an archive batch "shard_1/b2"), and its occurrence in this process:
// the N-th time this process reached STEP (counted over every context), or the N-th time it
// reached STEP with that CONTEXT. The step and its context name the same boundary in every
// process of an operation, so a run killed at one and resumed can be killed again at a later
// one, and the chained crash tests (tests/integration/crash_points.inc) kill each once.
//
//   SHARDCTL_FAULT=SPEC[,SPEC...]    _exit(99) at the first boundary reached that matches one
//   SHARDCTL_FAULT_PAUSE=SPEC[,...]  stop the process there instead (SIGSTOP), so a test can act
//                                    while it is frozen and then let it go on (SIGCONT)
//   SHARDCTL_FAULT_TRACE=FILE        append every boundary reached, one line each: "STEP N", or
//                                    "STEP@CONTEXT N" (N counted per step and context), written
//                                    before the process exits or stops there
// where SPEC is STEP[:N] (the N-th time this process reaches STEP, whatever the context) or
// STEP@CONTEXT[:N] (the N-th time with that context); N defaults to 1. A trace line
// "STEP@CONTEXT N" is the SPEC "STEP@CONTEXT:N" of that boundary.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::fault {

// One SPEC of SHARDCTL_FAULT or SHARDCTL_FAULT_PAUSE.
struct FaultSpec {
  std::string step;
  std::optional<std::string> context;  // none: counted over every context of the step
  int occurrence = 1;

  // "STEP", "STEP:N", "STEP@CONTEXT" or "STEP@CONTEXT:N".
  static FaultSpec parse(std::string_view text);
  // A comma-separated list of them; empty entries are ignored.
  static std::vector<FaultSpec> parse_list(std::string_view text);
};

class FaultInjector {
 public:
  FaultInjector();  // reads the environment once
  // Marks a step boundary; may end or stop the process. `context` names the unit of work the
  // boundary concerns, the same in every process (empty: none). Not thread-safe: callers on
  // several threads serialize their calls.
  void point(std::string_view step, std::string_view context = {});

 private:
  std::vector<FaultSpec> fail_, pause_;
  std::optional<std::string> trace_file_;
  // Occurrences so far: by step (every context), and by "STEP@CONTEXT".
  std::map<std::string, int, std::less<>> seen_;
};

}  // namespace shardctl::fault
