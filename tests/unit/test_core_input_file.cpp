// Reading a file the operator names (core/input_file.hpp): a regular file of bounded size, or
// a refusal (65) that names it and says what it is, without blocking on a FIFO or reading a
// device.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "support.hpp"

using namespace shardctl;
namespace fs = std::filesystem;

namespace {

InputFileRules input_plan_rules(std::uintmax_t max = 100) { return {"plan file", max, ErrorKind::usage, "make a plan"}; }

Error input_refusal(const fs::path& p, const InputFileRules& rules) {
  try {
    read_input_file(p, rules);
  } catch (const Error& e) {
    CHECK(e.hint() == rules.hint);
    return e;
  }
  FAIL("accepted: " << p);
  return internal_error("unreachable");
}

}  // namespace

TEST_CASE("a regular file within the limit is read whole") {
  test::ScratchDir s;
  std::ofstream(s.dir / "p.json") << std::string(100, 'x');
  CHECK(read_input_file(s.dir / "p.json", input_plan_rules()) == std::string(100, 'x'));
  std::ofstream(s.dir / "empty.json");
  CHECK(read_input_file(s.dir / "empty.json", input_plan_rules()).empty());
}

TEST_CASE("a file over the limit is refused before it is read") {
  test::ScratchDir s;
  std::ofstream(s.dir / "big.json") << std::string(101, 'x');
  auto e = input_refusal(s.dir / "big.json", input_plan_rules());
  CHECK(e.kind() == ErrorKind::data);
  CHECK(std::string(e.what()) == "plan file " + (s.dir / "big.json").string() +
                                     " is 101 bytes; the limit for plan files is 100 bytes");
  // A sparse file of 2 GiB: refused by its size, not read.
  fs::path sparse = s.dir / "sparse.json";
  std::ofstream(sparse).close();
  fs::resize_file(sparse, std::uintmax_t{2} << 30);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(input_refusal(sparse, input_plan_rules(64u << 20)).what() ==
        "plan file " + sparse.string() + " is 2147483648 bytes; the limit for plan files is 67108864 bytes (64 MiB)");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("a FIFO, a device and a directory are refused, never opened for good or read") {
  test::ScratchDir s;
  REQUIRE(mkfifo((s.dir / "fifo").c_str(), 0600) == 0);
  auto t0 = std::chrono::steady_clock::now();
  auto fifo = input_refusal(s.dir / "fifo", input_plan_rules());
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(fifo.kind() == ErrorKind::data);
  CHECK(std::string(fifo.what()) == "plan file " + (s.dir / "fifo").string() + " is not a regular file (a FIFO)");
  CHECK(std::string(input_refusal("/dev/zero", input_plan_rules()).what()) == "plan file /dev/zero is not a regular file (a character device)");
  CHECK(std::string(input_refusal(s.dir, input_plan_rules()).what()) == "plan file " + s.dir.string() + " is not a regular file (a directory)");
  // Through a symbolic link too; and with no_follow, the link itself is refused.
  fs::create_symlink(s.dir / "fifo", s.dir / "link");
  CHECK(std::string(input_refusal(s.dir / "link", input_plan_rules()).what()).find("(a FIFO)") != std::string::npos);
  std::ofstream(s.dir / "real.json") << "{}";
  fs::create_symlink(s.dir / "real.json", s.dir / "real-link");
  CHECK(read_input_file(s.dir / "real-link", input_plan_rules()) == "{}");
  auto rules = input_plan_rules();
  rules.no_follow = true;
  rules.shown = "V1__x.sql";
  CHECK(std::string(input_refusal(s.dir / "real-link", rules).what()) == "plan file V1__x.sql is not a regular file (a symbolic link)");
}

TEST_CASE("a file that cannot be opened is the kind the caller says") {
  test::ScratchDir s;
  auto e = input_refusal(s.dir / "missing.json", input_plan_rules());
  CHECK(e.kind() == ErrorKind::usage);
  CHECK(std::string(e.what()) == "cannot read plan file " + (s.dir / "missing.json").string() + ": No such file or directory");
  auto rules = input_plan_rules();
  rules.unopenable = ErrorKind::data;
  CHECK(input_refusal(s.dir / "missing.json", rules).kind() == ErrorKind::data);
}
