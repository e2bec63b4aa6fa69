#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/checks.hpp"
#include "cli/family.hpp"
#include "core/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace shardctl;

// Runs `shardctl-t ARGS... --config EMPTY` (an empty config file: Family::main loads the config
// before any handler) and keeps what it printed on stderr.
struct Run {
  int code = -1;
  std::string err;
};

class EmptyConfig {
 public:
  EmptyConfig() : path_(fs::temp_directory_path() / ("shardctl-cli-app-test-" + std::to_string(::getpid()) + ".toml")) {
    std::ofstream(path_) << "";
  }
  ~EmptyConfig() { fs::remove(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Run run(cli::Family& fam, std::vector<std::string> args) {
  static EmptyConfig config;
  args.insert(args.begin(), "shardctl-t");
  args.push_back("--config");
  args.push_back(config.path().string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  Run r;
  r.code = fam.main(static_cast<int>(argv.size()), argv.data());
  std::cerr.rdbuf(old);
  r.err = err.str();
  return r;
}

// One command with an option of every variable type cli::App takes.
struct Everything {
  cli::Family fam{"t", "test family"};
  std::string text;
  int number = 0;
  std::optional<std::string> maybe_text;
  std::optional<int> maybe_number;
  std::optional<std::int64_t> big;
  std::optional<double> ratio;
  std::vector<std::string> list, repeated;
  bool flag = false;
  bool ran = false;

  Everything() {
    auto* cmd = fam.command("cmd", "every type", [this](cli::Context&) { ran = true; });
    cmd->add_option("TEXT", text, "a positional")->required();
    cmd->add_option("--number", number, "int")->check(cli::whole_number(1, 10))->type_name("N");
    cmd->add_option("--maybe-text", maybe_text, "optional string")->type_name("WORD");
    cmd->add_option("--maybe-number", maybe_number, "optional int")->check(cli::whole_number(0))->type_name("N");
    cmd->add_option("--big", big, "optional int64")->type_name("N");
    cmd->add_option("--ratio", ratio, "optional double")->check(cli::Range(0.0, 1.0))->type_name("X");
    cmd->add_option("--list", list, "comma-separated")->delimiter(',')->type_name("A,B");
    cmd->add_option("--repeated", repeated, "repeatable")->type_name("R")->allow_extra_args(false);
    cmd->add_flag("--flag", flag, "a flag");
    auto* kind = cmd->add_option("--kind", maybe_text, "member")->check(cli::IsMember({"a", "b"}));
    auto* other = cmd->add_option("--other", maybe_text, "excluded by --kind");
    kind->excludes(other);
  }
};

}  // namespace

TEST_CASE("every option type cli::App takes lands in its variable") {
  Everything e;
  auto r = run(e.fam, {"cmd", "hello", "--number", "7", "--maybe-text", "w", "--maybe-number", "0", "--big",
                       "9000000000", "--ratio", "0.25", "--list", "a,b,c", "--repeated", "x", "--repeated", "y",
                       "--flag"});
  CHECK(r.err == "");
  CHECK(r.code == 0);
  CHECK(e.ran);
  CHECK(e.text == "hello");
  CHECK(e.number == 7);
  CHECK(e.maybe_text == "w");
  CHECK(e.maybe_number == 0);
  CHECK(e.big == std::int64_t{9'000'000'000});
  CHECK(e.ratio == 0.25);
  CHECK(e.list == std::vector<std::string>{"a", "b", "c"});
  CHECK(e.repeated == std::vector<std::string>{"x", "y"});
  CHECK(e.flag);
}

TEST_CASE("a refused value is a usage error naming it, and no handler runs") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"cmd", "x", "--number", "11"}, "--number: '11' is not a whole number from 1 to 10"},
           {{"cmd", "x", "--maybe-number", "-1"}, "--maybe-number: '-1' is not a whole number of at least 0"},
           {{"cmd", "x", "--ratio", "2"}, "--ratio: Value 2 not in range 0.000000 to 1.000000"},
           {{"cmd", "x", "--kind", "c"}, "--kind: c not in {a,b}"},
           {{"cmd", "x", "--kind", "a", "--other", "b"}, "--kind excludes --other"},
           {{"cmd"}, "TEXT is required"},
       }) {
    CAPTURE(c.message);
    Everything e;
    auto r = run(e.fam, c.args);
    CHECK(r.code == exit_code::usage);
    CHECK(r.err == "shardctl t: error: " + c.message + "\nhint: see `shardctl t --help`\n");
    CHECK_FALSE(e.ran);
  }
}

TEST_CASE("a cli::RequiredError thrown by a callback is reported as a missing option") {
  cli::Family fam("t", "test family");
  std::optional<std::string> point, range;
  bool ran = false;
  auto* add = fam.command("add", "needs one of two", [&](cli::Context&) { ran = true; });
  add->add_option("--point", point, "one");
  add->add_option("--range", range, "the other");
  add->callback([&] {
    if (!point && !range) throw cli::RequiredError("--point or --range");
  });
  auto r = run(fam, {"add"});
  CHECK(r.code == exit_code::usage);
  CHECK(r.err == "shardctl t: error: --point or --range is required\nhint: see `shardctl t --help`\n");
  CHECK_FALSE(ran);
  r = run(fam, {"add", "--range", "1..2"});
  CHECK(r.code == 0);
  CHECK(ran);
}
