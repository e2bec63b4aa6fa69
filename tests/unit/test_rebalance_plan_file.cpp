// Reading a plan file (rebalance/plan_file.hpp): only as `rebalance plan` wrote it (its
// fingerprint present and matching), only a regular file of bounded size and depth, every bad
// value a data error (65) naming the file and the field.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "planner/json.hpp"
#include "rebalance/plan_file.hpp"
#include "support.hpp"

using namespace shardctl;
namespace fs = std::filesystem;

namespace {

// A plan file as `rebalance plan` writes it: one split step on map m.
nlohmann::json written_plan() {
  rebalance::PlanFile f;
  f.maps.push_back({"m", 3});
  f.snapshot_id = 7;
  f.snapshot_fingerprint = "abc";
  f.taken_at = "2026-11-25T10:00:00Z";
  f.options = {{"objective", "size"}};
  planner::Plan p;
  p.maps.push_back({"m", routing::MapKind::range, routing::KeyType::int8});
  planner::Step s;
  s.kind = planner::StepKind::split;
  s.map = "m";
  s.from = "s1";
  s.to = "s2";
  s.range = {routing::Key{std::int64_t{100}}, std::nullopt};
  s.at = routing::Key{std::int64_t{100}};
  s.rows = 10;
  s.bytes = 1000;
  p.steps.push_back(s);
  f.plan = p;
  return rebalance::to_json(f);
}

Error plan_file_refusal(const fs::path& p) {
  try {
    rebalance::read_plan_file(p.string());
  } catch (const Error& e) {
    return e;
  }
  FAIL("accepted " << p);
  return internal_error("unreachable");
}

void write_plan_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

}  // namespace

TEST_CASE("a plan as written is read back, whatever its layout") {
  test::ScratchDir s;
  auto doc = written_plan();
  write_plan_text(s.dir / "p.json", doc.dump(2));
  auto f = rebalance::read_plan_file((s.dir / "p.json").string());
  CHECK(f.fingerprint == doc["fingerprint"]);
  CHECK(f.plan.steps.size() == 1);
  write_plan_text(s.dir / "p.json", doc.dump());  // reformatted: the same content, the same fingerprint
  CHECK(rebalance::read_plan_file((s.dir / "p.json").string()).fingerprint == f.fingerprint);
}

TEST_CASE("a plan without its fingerprint, or with one that does not match, is refused") {
  test::ScratchDir s;
  auto p = s.dir / "p.json";
  auto doc = written_plan();
  auto unsigned_doc = doc;
  unsigned_doc.erase("fingerprint");
  unsigned_doc["plan"]["steps"][0]["to"] = "s3";
  write_plan_text(p, unsigned_doc.dump(2));
  auto e = plan_file_refusal(p);
  CHECK(e.kind() == ErrorKind::data);
  CHECK(std::string(e.what()) == p.string() + ": the plan has no \"fingerprint\"; a plan is applied only as `shardctl rebalance plan` wrote it");
  CHECK(e.hint() == "make a new plan with `shardctl rebalance plan -o " + p.string() + "`");
  auto edited = doc;
  edited["plan"]["steps"][0]["to"] = "s3";
  write_plan_text(p, edited.dump(2));
  CHECK(std::string(plan_file_refusal(p).what()) ==
        p.string() + ": the plan was edited after it was made (its fingerprint does not match its content)");
  edited = doc;
  edited["fingerprint"] = 42;
  write_plan_text(p, edited.dump(2));
  CHECK(std::string(plan_file_refusal(p).what()).find("has no \"fingerprint\"") != std::string::npos);
}

TEST_CASE("a file of another format, or of a format version this shardctl does not read, is refused") {
  test::ScratchDir s;
  auto p = s.dir / "p.json";
  auto doc = written_plan();
  CHECK(doc["format"] == "shardctl-rebalance-plan");
  CHECK(doc["format_version"] == 1);
  auto other = doc;
  other["format"] = "shardctl-archive-manifest";
  write_plan_text(p, other.dump(2));
  auto e = plan_file_refusal(p);
  CHECK(e.kind() == ErrorKind::data);
  CHECK(std::string(e.what()) == p.string() + ": not a shardctl rebalance plan (\"format\" is not \"shardctl-rebalance-plan\")");
  auto newer = doc;
  newer["format_version"] = 2;
  write_plan_text(p, newer.dump(2));
  e = plan_file_refusal(p);
  CHECK(e.kind() == ErrorKind::data);
  CHECK(std::string(e.what()) == p.string() + ": plan format version 2 is not one this shardctl reads");
}

TEST_CASE("bad values under a matching fingerprint are refused naming the field") {
  test::ScratchDir s;
  auto p = s.dir / "p.json";
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& message) {
    auto doc = written_plan();
    edit(doc);
    doc["fingerprint"] = rebalance::plan_fingerprint(doc);  // as if written so
    write_plan_text(p, doc.dump(2));
    auto e = plan_file_refusal(p);
    CHECK(e.kind() == ErrorKind::data);
    CHECK(std::string(e.what()) == p.string() + ": " + message);
  };
  refused([](auto& d) { d["plan"]["steps"][0]["rows"] = -5; }, "plan.steps[0].rows: expected a whole number >= 0, not -5");
  refused([](auto& d) { d["maps"][0]["version"] = 1.5; }, "maps[0].version: expected a whole number >= 1, not 1.5");
  refused([](auto& d) { d["maps"][0]["version"] = nlohmann::json::parse("18446744073709551615"); },
          "maps[0].version: expected a whole number >= 1, not 18446744073709551615");
  refused([](auto& d) { d["stats"]["snapshot_id"] = "7"; }, "stats.snapshot_id: expected a whole number >= 1, not \"7\"");
  refused([](auto& d) { d["stats"]["taken_at"] = "yesterday"; },
          "stats.taken_at: expected a UTC time as YYYY-MM-DDTHH:MM:SSZ, not 'yesterday'");
  refused([](auto& d) { d["stats"] = 1; }, "stats: expected an object");
  refused([](auto& d) { d.erase("plan"); }, "plan: missing");
  refused([](auto& d) { d["options"] = "fast"; }, "options: expected an object");
}

TEST_CASE("numbers no double holds and deep nesting are refused at line:col before parsing") {
  test::ScratchDir s;
  auto p = s.dir / "p.json";
  auto text = written_plan().dump(1);
  auto at = text.find("\"imbalance_before\": ");
  REQUIRE(at != std::string::npos);
  auto value = at + std::string("\"imbalance_before\": ").size();
  write_plan_text(p, text.substr(0, value) + "1e400" + text.substr(text.find_first_of(",\n", value)));
  auto e = plan_file_refusal(p);
  CHECK(e.kind() == ErrorKind::data);
  CHECK(std::string(e.what()).find(": plan.imbalance_before: the number 1e400 is out of range") != std::string::npos);
  CHECK(std::string(e.what()).rfind(p.string() + ":", 0) == 0);
  // One extra key nested 100,000 deep (nlohmann copied it recursively: SIGSEGV).
  std::string deep = "{\"extra\": " + std::string(100000, '[') + std::string(100000, ']') + ", " + text.substr(1);
  write_plan_text(p, deep);
  std::string field = "extra";
  for (int i = 0; i < 63; ++i) field += "[0]";  // the root object and 63 arrays make 64 levels
  CHECK(std::string(plan_file_refusal(p).what()) ==
        p.string() + ":1:74: " + field + ": nested more than 64 levels deep (arrays and objects within each other)");
  write_plan_text(p, "{\"format\": ");
  CHECK(std::string(plan_file_refusal(p).what()).rfind(p.string() + ":1:12: not valid JSON: ", 0) == 0);
}

TEST_CASE("a FIFO, a device or a directory is refused (65), a missing file is a usage error (64)") {
  test::ScratchDir s;
  REQUIRE(mkfifo((s.dir / "fifo").c_str(), 0600) == 0);
  auto fifo = plan_file_refusal(s.dir / "fifo");
  CHECK(fifo.kind() == ErrorKind::data);
  CHECK(std::string(fifo.what()) == "plan file " + (s.dir / "fifo").string() + " is not a regular file (a FIFO)");
  CHECK(plan_file_refusal("/dev/zero").kind() == ErrorKind::data);
  CHECK(plan_file_refusal(s.dir).kind() == ErrorKind::data);
  CHECK(plan_file_refusal(s.dir / "missing.json").kind() == ErrorKind::usage);
}
