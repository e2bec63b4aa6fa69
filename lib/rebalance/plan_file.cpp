#include "rebalance/plan_file.hpp"

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/nesting.hpp"
#include "core/utf8.hpp"
#include "digest/sha256.hpp"
#include "planner/json.hpp"

namespace shardctl::rebalance {
namespace {

// A plan file is read whole: 64 MiB is over 100,000 steps.
constexpr std::uintmax_t max_plan_file_bytes = 64u << 20;

// What a plan file says it is, and the one version of its layout this shardctl writes and reads.
constexpr const char* plan_format = "shardctl-rebalance-plan";
constexpr int plan_format_version = 1;

// "2026-11-25T10:00:00Z", as `rebalance plan` writes the stats snapshot's time.
bool utc_timestamp(const std::string& s) {
  static constexpr std::string_view shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) return false;
  return true;
}

}  // namespace

std::string plan_fingerprint(const nlohmann::json& doc) {
  nlohmann::json d = doc;
  d.erase("fingerprint");
  digest::Sha256 h;
  h.update(d.dump());
  return h.hex_digest();
}

nlohmann::json to_json(const PlanFile& f) {
  nlohmann::json maps = nlohmann::json::array();
  for (const auto& m : f.maps) maps.push_back({{"name", m.name}, {"version", m.version}});
  nlohmann::json doc = {{"format", plan_format},
                        {"format_version", plan_format_version},
                        {"maps", std::move(maps)},
                        {"stats", {{"snapshot_id", f.snapshot_id}, {"fingerprint", f.snapshot_fingerprint}, {"taken_at", f.taken_at}}},
                        {"options", f.options},
                        {"plan", planner::to_json(f.plan)}};
  doc["fingerprint"] = plan_fingerprint(doc);
  return doc;
}

PlanFile read_plan_file(const std::string& path) {
  std::string remake = "make a new plan with `shardctl rebalance plan -o " + path + "`";
  // The path is the argument the operator typed: one that cannot be opened is a usage error (64).
  std::string text =
      read_input_file(path, {"plan file", max_plan_file_bytes, ErrorKind::usage, "name the file `shardctl rebalance plan -o` wrote"});
  require_sound_json_text(text, path, remake);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, column C: ".
    std::string what = e.what();
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw data_error(path + ":" + position_text(text, e.byte > 0 ? e.byte - 1 : 0) + ": not valid JSON: " + what, remake);
  } catch (const nlohmann::json::exception& e) {
    throw data_error(path + ": not a plan file: " + std::string(e.what()), remake);
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != plan_format)
    throw data_error(path + ": not a shardctl rebalance plan (\"format\" is not \"" + plan_format + "\")", remake);
  if (doc.value("format_version", nlohmann::json()) != plan_format_version)
    throw data_error(path + ": plan format version " + doc.value("format_version", nlohmann::json()).dump() +
                         " is not one this shardctl reads",
                     remake);
  // The fingerprint first: a plan runs exactly as `rebalance plan` wrote it, so an edited or
  // unsigned one is refused before anything in it is believed.
  auto recorded = doc.find("fingerprint");
  if (recorded == doc.end() || !recorded->is_string())
    throw data_error(path + ": the plan has no \"fingerprint\"; a plan is applied only as `shardctl rebalance plan` wrote it",
                     remake);
  std::string fingerprint = plan_fingerprint(doc);
  if (*recorded != fingerprint)
    throw data_error(path + ": the plan was edited after it was made (its fingerprint does not match its content)", remake);
  PlanFile f;
  f.fingerprint = std::move(fingerprint);
  try {
    planner::FieldReader top(doc, "");
    for (std::size_t i = 0; i < top.array("maps").size(); ++i) {
      auto m = top.at("maps", i);
      f.maps.push_back({m.str("name"), m.integer("version", 1)});
    }
    auto st = top.object("stats");
    f.snapshot_id = st.integer("snapshot_id", 1);
    f.snapshot_fingerprint = st.str("fingerprint");
    f.taken_at = st.str("taken_at");
    if (!utc_timestamp(f.taken_at)) st.fail("taken_at", "expected a UTC time as YYYY-MM-DDTHH:MM:SSZ, not '" + printable(f.taken_at) + "'");
    if (top.has("options") && !doc["options"].is_object()) top.fail("options", "expected an object");
    f.options = doc.value("options", nlohmann::json::object());
    f.plan = planner::plan_from_json(top.need("plan"));
  } catch (const Error& e) {
    throw data_error(path + ": " + e.what(), remake);
  } catch (const std::exception& e) {
    throw data_error(path + ": malformed plan file: " + std::string(e.what()), remake);
  }
  return f;
}

}  // namespace shardctl::rebalance
