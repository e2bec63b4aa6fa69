#include "migrate/online.hpp"

#include "core/error.hpp"

namespace shardctl::migrate {

nlohmann::json online_json(const OnlineSettings& s) {
  return {{"max_lag_seconds", s.max_lag_seconds}, {"cutover_timeout_ms", s.cutover_timeout_ms}, {"cutover_tries", s.cutover_tries}};
}

std::optional<OnlineSettings> online_from_args(const nlohmann::json& args) {
  if (!args.is_object() || !args.contains("online")) return std::nullopt;
  const auto& o = args["online"];
  OnlineSettings s;
  try {
    s.max_lag_seconds = o.at("max_lag_seconds").get<double>();
    s.cutover_timeout_ms = o.at("cutover_timeout_ms").get<int>();
    s.cutover_tries = o.at("cutover_tries").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw internal_error(std::string("the journaled online settings ") + o.dump() + " are unreadable: " + e.what());
  }
  if (s.max_lag_seconds <= 0 || s.cutover_timeout_ms <= 0 || s.cutover_tries <= 0)
    throw internal_error("the journaled online settings " + o.dump() + " are out of range");
  return s;
}

}  // namespace shardctl::migrate
