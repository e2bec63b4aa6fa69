#include "rebalance/plan_file.hpp"

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "digest/sha256.hpp"
#include "planner/json.hpp"

namespace shardctl::rebalance {

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
  nlohmann::json doc = {{"format", "shardctl-rebalance-plan"},
                        {"format_version", 1},
                        {"maps", std::move(maps)},
                        {"stats", {{"snapshot_id", f.snapshot_id}, {"fingerprint", f.snapshot_fingerprint}, {"taken_at", f.taken_at}}},
                        {"options", f.options},
                        {"plan", planner::to_json(f.plan)}};
  doc["fingerprint"] = plan_fingerprint(doc);
  return doc;
}

PlanFile read_plan_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("cannot read plan file " + path, "make one with `shardctl rebalance plan -o " + path + "`");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw data_error(path + ": not JSON: " + std::string(e.what()));
  }
  PlanFile f;
  try {
    if (doc.at("format").get<std::string>() != "shardctl-rebalance-plan")
      throw data_error(path + ": not a shardctl rebalance plan (\"format\" is not \"shardctl-rebalance-plan\")");
    if (doc.at("format_version").get<int>() != 1)
      throw data_error(path + ": plan format version " + doc.at("format_version").dump() + " is not one this shardctl reads");
    for (const auto& m : doc.at("maps")) f.maps.push_back({m.at("name").get<std::string>(), m.at("version").get<std::int64_t>()});
    const auto& st = doc.at("stats");
    f.snapshot_id = st.at("snapshot_id").get<std::int64_t>();
    f.snapshot_fingerprint = st.at("fingerprint").get<std::string>();
    f.taken_at = st.at("taken_at").get<std::string>();
    f.options = doc.value("options", nlohmann::json::object());
    f.plan = planner::plan_from_json(doc.at("plan"));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw data_error(path + ": malformed plan file: " + std::string(e.what()));
  }
  f.fingerprint = plan_fingerprint(doc);
  if (doc.contains("fingerprint") && doc["fingerprint"] != f.fingerprint)
    throw data_error(path + ": the plan was edited after it was made (its fingerprint does not match its content)",
                     "make a new plan with `shardctl rebalance plan -o " + path + "`");
  return f;
}

}  // namespace shardctl::rebalance
