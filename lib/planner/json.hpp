// Plans and fleets as JSON: the plan file's body (the stats helper wraps it in an envelope with
// the map version and stats fingerprint), and fleets for benches, tests and debugging. Keys are
// written as routing::format_key of the map's bound type and read back with that type, so a
// plan round-trips exactly.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/planner.hpp"

namespace shardctl::planner {

// Reads the fields of one JSON object, each accessor naming the field it failed on with a data
// Error (65): "plan.steps[2].bytes: expected a whole number >= 0, not -5". Types are never
// converted (1.5 is not an integer) and numbers outside a field's range are refused, not wrapped.
class FieldReader {
 public:
  // `path` names `j` in messages ("plan"; empty for a document's top level).
  FieldReader(const nlohmann::json& j, std::string path);

  [[noreturn]] void fail(const std::string& field, const std::string& what) const;
  const nlohmann::json& need(const std::string& field) const;
  bool has(const std::string& field) const;
  std::string str(const std::string& field) const;
  std::int64_t integer(const std::string& field, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  double number(const std::string& field, double min = -std::numeric_limits<double>::infinity()) const;
  bool boolean(const std::string& field) const;
  const nlohmann::json& array(const std::string& field) const;
  routing::Key key(const std::string& field, routing::KeyType type) const;
  std::optional<routing::Key> bound(const std::string& field, routing::KeyType type) const;  // null: none
  FieldReader at(const std::string& field, std::size_t i) const;  // element i of array `field`
  FieldReader object(const std::string& field) const;
  const std::string& path() const { return path_; }

 private:
  std::string field_path(const std::string& field) const;

  const nlohmann::json& j_;
  std::string path_;
};

nlohmann::json to_json(const Plan& plan);
// Throws a data Error (exit 65) naming the field, e.g. "plan: steps[2].bytes: expected an integer".
Plan plan_from_json(const nlohmann::json& json);

nlohmann::json to_json(const Fleet& fleet);
Fleet fleet_from_json(const nlohmann::json& json);  // data Error naming the field

}  // namespace shardctl::planner
