// The fault injector (fault/fault.hpp): how SHARDCTL_FAULT, SHARDCTL_FAULT_PAUSE and
// SHARDCTL_FAULT_TRACE name step boundaries, with and without a context. The crash tests
// (tests/integration/crash_points.inc, archive_crash.inc) rely on a trace line "STEP@CONTEXT N"
// being the SPEC "STEP@CONTEXT:N" that kills there, and on a list killing at the first reached.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fault/fault.hpp"

using shardctl::fault::FaultInjector;
using shardctl::fault::FaultSpec;

namespace {

// A scratch trace file, removed at the end.
struct TraceFile {
  std::string path;
  TraceFile() {
    char name[] = "/tmp/test_shardio_fault.XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
  }
  ~TraceFile() { std::remove(path.c_str()); }
  std::vector<std::string> lines() const {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
};

// The environment of one injector: the three variables set (or unset when empty) around it.
void set_env(const std::string& fault, const std::string& pause, const std::string& trace) {
  auto set = [](const char* name, const std::string& v) {
    if (v.empty()) unsetenv(name);
    else setenv(name, v.c_str(), 1);
  };
  set("SHARDCTL_FAULT", fault);
  set("SHARDCTL_FAULT_PAUSE", pause);
  set("SHARDCTL_FAULT_TRACE", trace);
}

// Runs `points` on an injector in a child process; returns its wait status.
int in_child(const std::string& fault, const std::string& trace, const std::function<void(FaultInjector&)>& points) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    set_env(fault, "", trace);
    FaultInjector f;
    points(f);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

// The boundaries of a two-batch run, three tables a batch.
void two_batches(FaultInjector& f) {
  f.point("references");
  for (const char* b : {"b1", "b2"}) {
    f.point("offline.mapping", b);
    for (int t = 0; t < 3; ++t) f.point("copy.table", b);
    f.point("copy.commit", b);
  }
  f.point("finished");
}

// How a two-batch run under SHARDCTL_FAULT=`fault` ended: its exit code, the boundaries its
// trace counted, and the last of them ("" for none).
struct Ended {
  int exit_code;
  std::size_t boundaries;
  std::string last;
};

Ended two_batches_under(const std::string& fault) {
  TraceFile trace;
  int status = in_child(fault, trace.path, two_batches);
  REQUIRE(WIFEXITED(status));
  auto lines = trace.lines();
  return {WEXITSTATUS(status), lines.size(), lines.empty() ? "" : lines.back()};
}

}  // namespace

TEST_CASE("a fault spec names a step, maybe a context, and an occurrence (1 by default)") {
  auto s = FaultSpec::parse("copy.table@b3:2");
  CHECK(s.step == "copy.table");
  REQUIRE(s.context);
  CHECK(*s.context == "b3");
  CHECK(s.occurrence == 2);

  s = FaultSpec::parse("archive-loaded@shard_1/b2");
  CHECK(s.step == "archive-loaded");
  CHECK(*s.context == "shard_1/b2");
  CHECK(s.occurrence == 1);

  s = FaultSpec::parse("journal.offline:2");
  CHECK(s.step == "journal.offline");
  CHECK_FALSE(s.context);
  CHECK(s.occurrence == 2);

  s = FaultSpec::parse("finished");
  CHECK(s.step == "finished");
  CHECK_FALSE(s.context);
  CHECK(s.occurrence == 1);

  auto list = FaultSpec::parse_list("flip@b1:1,,purge:2,");
  REQUIRE(list.size() == 2);
  CHECK(list[0].step == "flip");
  CHECK(list[1].step == "purge");
  CHECK(list[1].occurrence == 2);
  CHECK(FaultSpec::parse_list("").empty());
}

TEST_CASE("the trace counts each step per context, and plain steps as before") {
  TraceFile trace;
  set_env("", "", trace.path);
  {
    FaultInjector f;
    two_batches(f);
  }
  set_env("", "", "");
  std::vector<std::string> want{"references 1",        "offline.mapping@b1 1", "copy.table@b1 1", "copy.table@b1 2",
                                "copy.table@b1 3",     "copy.commit@b1 1",     "offline.mapping@b2 1", "copy.table@b2 1",
                                "copy.table@b2 2",     "copy.table@b2 3",      "copy.commit@b2 1",     "finished 1"};
  CHECK(trace.lines() == want);
}

TEST_CASE("STEP@CONTEXT:N exits 99 at that boundary, whatever came before it") {
  auto ended = two_batches_under("copy.table@b2:2");
  CHECK(ended.exit_code == 99);
  CHECK(ended.last == "copy.table@b2 2");
}

TEST_CASE("STEP:N counts the step over every context (the specs tests used before contexts)") {
  auto ended = two_batches_under("copy.table:5");
  CHECK(ended.exit_code == 99);
  CHECK(ended.last == "copy.table@b2 2");
  ended = two_batches_under("offline.mapping:2");
  CHECK(ended.exit_code == 99);
  CHECK(ended.last == "offline.mapping@b2 1");
}

TEST_CASE("a list of specs exits at the first boundary reached that matches one of them") {
  auto ended = two_batches_under("finished:1,copy.commit@b2:1,copy.table@b1:3");
  CHECK(ended.exit_code == 99);
  CHECK(ended.last == "copy.table@b1 3");
}

TEST_CASE("a spec no boundary matches lets the process finish") {
  // Wrong context, an occurrence past the last, and a context on a step that has none.
  auto ended = two_batches_under("copy.table@b3:1,copy.table@b1:4,finished@b1:1");
  CHECK(ended.exit_code == 0);
  CHECK(ended.boundaries == 12);
}

TEST_CASE("SHARDCTL_FAULT_PAUSE stops the process at its boundary, and it goes on when continued") {
  TraceFile trace;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    set_env("", "copy.commit@b1", trace.path);
    FaultInjector f;
    two_batches(f);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, WUNTRACED) == pid);
  bool stopped = WIFSTOPPED(status);
  auto at_stop = trace.lines();
  kill(pid, SIGCONT);  // before any REQUIRE can leave it stopped
  CHECK(stopped);
  REQUIRE(!at_stop.empty());
  CHECK(at_stop.back() == "copy.commit@b1 1");
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(trace.lines().back() == "finished 1");
}
