#include "planner/json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"

namespace shardctl::planner {

using nlohmann::json;

namespace {

json key_json(const std::optional<routing::Key>& key) { return key ? json(routing::format_key(*key)) : json(nullptr); }

json map_json(const Map& m) {
  return {{"name", m.name}, {"kind", to_text(m.kind)}, {"bound_type", to_text(m.bound_type)}};
}

Map map_from(const FieldReader& r) {
  Map m;
  m.name = r.str("name");
  try {
    m.kind = parse_word<routing::MapKind>(r.str("kind"));
  } catch (const Error& e) {
    r.fail("kind", e.what());
  }
  try {
    m.bound_type = routing::parse_key_type(r.str("bound_type"));
  } catch (const Error& e) {
    r.fail("bound_type", e.what());
  }
  return m;
}

using Types = std::unordered_map<std::string, routing::KeyType>;

routing::KeyType type_of(const Types& types, const FieldReader& r) {
  auto name = r.str("map");
  auto it = types.find(name);
  if (it == types.end()) r.fail("map", "names map " + name + ", which the maps list lacks");
  return it->second;
}

Objective objective_from(const FieldReader& r) {
  auto s = r.str("objective");
  if (auto o = from_text<Objective>(s)) return *o;
  r.fail("objective", "expected size, load or both, not '" + s + "'");
}

// Plan files' parts, each read by the field names to_json writes.
Types map_types_from(const FieldReader& r, std::vector<Map>& maps) {
  Types types;
  for (std::size_t i = 0; i < r.array("maps").size(); ++i) {
    maps.push_back(map_from(r.at("maps", i)));
    types[maps.back().name] = maps.back().bound_type;
  }
  return types;
}

// Step `i` of the plan (its `after` may name only earlier steps).
Step step_from(const FieldReader& s, const Types& types, std::size_t i) {
  Step step;
  auto kind = s.str("kind");
  if (auto k = from_text<StepKind>(kind)) step.kind = *k;
  else s.fail("kind", "expected split, move or merge, not '" + kind + "'");
  step.map = s.str("map");
  auto type = type_of(types, s);
  step.from = s.str("from");
  step.to = s.str("to");
  step.range.low = s.bound("low", type);
  step.range.high = s.bound("high", type);
  step.at = s.bound("at", type);
  if (step.kind == StepKind::split && !step.at) s.fail("at", "a split step needs its cut");
  auto side = moving_side_named(s.str("move"));
  if (!side) s.fail("move", "expected upper or lower");
  step.move_upper = *side;
  step.rows = s.integer("rows", 0);
  step.bytes = s.integer("bytes", 0);
  step.load = s.number("load", 0);
  step.batches = static_cast<int>(s.integer("batches", 1, std::numeric_limits<int>::max()));
  step.offline_seconds_per_batch = s.number("offline_seconds_per_batch", 0);
  const auto& after = s.array("after");
  for (std::size_t k = 0; k < after.size(); ++k) {
    if (!after[k].is_number_unsigned() || after[k].get<std::size_t>() >= i)
      s.fail("after[" + std::to_string(k) + "]", "expected the index of an earlier step");
    step.after.push_back(after[k].get<std::size_t>());
  }
  return step;
}

Balance balance_from(const FieldReader& s) {
  return {s.str("shard"),           s.integer("bytes_before", 0), s.integer("bytes_after", 0), s.number("load_before", 0),
          s.number("load_after", 0), s.integer("target_bytes", 0)};
}

Unsplittable unsplittable_from(const FieldReader& s, const Types& types) {
  auto type = type_of(types, s);
  return {s.str("map"), s.key("key", type), s.str("shard"), s.integer("bytes", 0), s.boolean("isolated")};
}

std::vector<std::string> notes_from(const FieldReader& r) {
  std::vector<std::string> out;
  const auto& notes = r.array("notes");
  for (std::size_t i = 0; i < notes.size(); ++i) {
    if (!notes[i].is_string()) r.fail("notes[" + std::to_string(i) + "]", "expected a string");
    out.push_back(notes[i].get<std::string>());
  }
  return out;
}

}  // namespace

namespace {
// A value as the file holds it, shortened for a message.
std::string shown_value(const json& v) {
  auto text = v.dump();
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}
}  // namespace

FieldReader::FieldReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

std::string FieldReader::field_path(const std::string& field) const { return path_.empty() ? field : path_ + "." + field; }

void FieldReader::fail(const std::string& field, const std::string& what) const {
  throw data_error(field_path(field) + ": " + what);
}

const json& FieldReader::need(const std::string& field) const {
  if (!j_.is_object()) throw data_error((path_.empty() ? std::string("the document") : path_) + ": expected an object");
  auto it = j_.find(field);
  if (it == j_.end()) fail(field, "missing");
  return *it;
}

bool FieldReader::has(const std::string& field) const { return j_.is_object() && j_.contains(field); }

std::string FieldReader::str(const std::string& field) const {
  const auto& v = need(field);
  if (!v.is_string()) fail(field, "expected a string, not " + shown_value(v));
  return v.get<std::string>();
}

std::int64_t FieldReader::integer(const std::string& field, std::int64_t min, std::int64_t max) const {
  const auto& v = need(field);
  auto range = [&] {
    constexpr auto lowest = std::numeric_limits<std::int64_t>::min(), highest = std::numeric_limits<std::int64_t>::max();
    if (min == lowest && max == highest) return std::string("a whole number (64-bit)");
    if (max == highest) return "a whole number >= " + std::to_string(min);
    return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  };
  // A number too large for int64 (nlohmann keeps up to 2^64-1 as unsigned) is out of range, not wrapped.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)))
    fail(field, "expected " + range() + ", not " + shown_value(v));
  auto n = v.get<std::int64_t>();
  if (n < min || n > max) fail(field, "expected " + range() + ", not " + shown_value(v));
  return n;
}

double FieldReader::number(const std::string& field, double min) const {
  const auto& v = need(field);
  if (!v.is_number()) fail(field, "expected a number, not " + shown_value(v));
  auto d = v.get<double>();
  if (!std::isfinite(d) || d < min) {
    auto lowest = json(min).dump();  // "0.0"
    if (lowest.size() > 2 && lowest.substr(lowest.size() - 2) == ".0") lowest.resize(lowest.size() - 2);
    fail(field, "expected a number >= " + lowest + ", not " + shown_value(v));
  }
  return d;
}

bool FieldReader::boolean(const std::string& field) const {
  const auto& v = need(field);
  if (!v.is_boolean()) fail(field, "expected true or false, not " + shown_value(v));
  return v.get<bool>();
}

const json& FieldReader::array(const std::string& field) const {
  const auto& v = need(field);
  if (!v.is_array()) fail(field, "expected an array");
  return v;
}

routing::Key FieldReader::key(const std::string& field, routing::KeyType type) const {
  const auto& v = need(field);
  if (!v.is_string()) fail(field, "expected a key as a string");
  try {
    return routing::parse_key(type, v.get<std::string>());
  } catch (const Error& e) {
    fail(field, e.what());
  }
}

std::optional<routing::Key> FieldReader::bound(const std::string& field, routing::KeyType type) const {
  if (need(field).is_null()) return std::nullopt;
  return key(field, type);
}

FieldReader FieldReader::at(const std::string& field, std::size_t i) const {
  return FieldReader(array(field)[i], field_path(field) + "[" + std::to_string(i) + "]");
}

FieldReader FieldReader::object(const std::string& field) const {
  const auto& v = need(field);
  if (!v.is_object()) fail(field, "expected an object");
  return FieldReader(v, field_path(field));
}

json to_json(const Plan& plan) {
  json steps = json::array();
  for (const auto& s : plan.steps) {
    json j = {{"kind", to_text(s.kind)},
              {"map", s.map},
              {"from", s.from},
              {"to", s.to},
              {"low", key_json(s.range.low)},
              {"high", key_json(s.range.high)},
              {"at", key_json(s.at)},
              {"move", moving_side_name(s.move_upper)},
              {"rows", s.rows},
              {"bytes", s.bytes},
              {"load", s.load},
              {"batches", s.batches},
              {"offline_seconds_per_batch", s.offline_seconds_per_batch},
              {"after", s.after}};
    steps.push_back(std::move(j));
  }
  json shards = json::array();
  for (const auto& b : plan.shards)
    shards.push_back({{"shard", b.shard},
                      {"bytes_before", b.bytes_before},
                      {"bytes_after", b.bytes_after},
                      {"load_before", b.load_before},
                      {"load_after", b.load_after},
                      {"target_bytes", b.target_bytes}});
  json hot = json::array();
  for (const auto& u : plan.unsplittable)
    hot.push_back({{"map", u.map}, {"key", routing::format_key(u.key)}, {"shard", u.shard}, {"bytes", u.bytes}, {"isolated", u.isolated}});
  json maps = json::array();
  for (const auto& m : plan.maps) maps.push_back(map_json(m));
  return {{"objective", to_text(plan.objective)},
          {"maps", maps},
          {"steps", steps},
          {"shards", shards},
          {"unsplittable", hot},
          {"notes", plan.notes},
          {"imbalance_before", plan.imbalance_before},
          {"imbalance_after", plan.imbalance_after},
          {"bytes_moved", plan.bytes_moved}};
}

Plan plan_from_json(const json& j) {
  FieldReader r(j, "plan");
  Plan plan;
  plan.objective = objective_from(r);
  Types types = map_types_from(r, plan.maps);
  for (std::size_t i = 0; i < r.array("steps").size(); ++i) plan.steps.push_back(step_from(r.at("steps", i), types, i));
  for (std::size_t i = 0; i < r.array("shards").size(); ++i) plan.shards.push_back(balance_from(r.at("shards", i)));
  for (std::size_t i = 0; i < r.array("unsplittable").size(); ++i)
    plan.unsplittable.push_back(unsplittable_from(r.at("unsplittable", i), types));
  plan.notes = notes_from(r);
  plan.imbalance_before = r.number("imbalance_before", 0);
  plan.imbalance_after = r.number("imbalance_after", 0);
  plan.bytes_moved = r.integer("bytes_moved", 0);
  return plan;
}

json to_json(const Fleet& fleet) {
  json shards = json::array();
  for (const auto& s : fleet.shards)
    shards.push_back({{"name", s.name},
                      {"status", to_text(s.status)},
                      {"capacity_bytes", s.capacity_bytes},
                      {"weight", s.weight},
                      {"fixed_bytes", s.fixed_bytes},
                      {"fixed_load", s.fixed_load}});
  json maps = json::array();
  for (const auto& m : fleet.maps) maps.push_back(map_json(m));
  json mappings = json::array();
  for (const auto& m : fleet.mappings) {
    json slices = json::array();
    for (const auto& s : m.slices)
      slices.push_back({{"low", routing::format_key(s.low)}, {"rows", s.rows}, {"bytes", s.bytes}, {"load", s.load}, {"single_key", s.single_key}});
    mappings.push_back({{"map", m.map},
                        {"low", key_json(m.range.low)},
                        {"high", key_json(m.range.high)},
                        {"is_point", m.is_point},
                        {"shard", m.shard},
                        {"rows", m.rows},
                        {"bytes", m.bytes},
                        {"load", m.load},
                        {"held", m.held},
                        {"slices", slices}});
  }
  return {{"shards", shards}, {"maps", maps}, {"mappings", mappings}};
}

Fleet fleet_from_json(const json& j) {
  FieldReader r(j, "fleet");
  Fleet fleet;
  for (std::size_t i = 0; i < r.array("shards").size(); ++i) {
    auto s = r.at("shards", i);
    Shard shard;
    shard.name = s.str("name");
    auto status = from_text<ShardStatus>(s.str("status"));
    if (!status) s.fail("status", "expected online, readonly or offline");
    shard.status = *status;
    shard.capacity_bytes = s.integer("capacity_bytes");
    shard.weight = s.number("weight");
    shard.fixed_bytes = s.integer("fixed_bytes");
    shard.fixed_load = s.number("fixed_load");
    fleet.shards.push_back(std::move(shard));
  }
  Types types = map_types_from(r, fleet.maps);
  fleet.mappings.reserve(r.array("mappings").size());
  for (std::size_t i = 0; i < r.array("mappings").size(); ++i) {
    auto s = r.at("mappings", i);
    Mapping m;
    m.map = s.str("map");
    auto type = type_of(types, s);
    m.range.low = s.bound("low", type);
    m.range.high = s.bound("high", type);
    m.is_point = s.boolean("is_point");
    m.shard = s.str("shard");
    m.rows = s.integer("rows");
    m.bytes = s.integer("bytes");
    m.load = s.number("load");
    m.held = s.boolean("held");
    for (std::size_t k = 0; k < s.array("slices").size(); ++k) {
      auto sl = s.at("slices", k);
      m.slices.push_back({sl.key("low", type), sl.integer("rows"), sl.integer("bytes"), sl.number("load"), sl.boolean("single_key")});
    }
    fleet.mappings.push_back(std::move(m));
  }
  return fleet;
}

}  // namespace shardctl::planner
