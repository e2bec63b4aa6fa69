#include "cli/help_spec.hpp"

namespace shardctl::cli {
namespace {

nlohmann::json options_of(const CLI::App& app) {
  nlohmann::json out = nlohmann::json::array();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    nlohmann::json o;
    o["names"] = nlohmann::json::array();
    for (const auto& s : opt->get_snames()) o["names"].push_back("-" + s);
    for (const auto& l : opt->get_lnames()) o["names"].push_back("--" + l);
    if (o["names"].empty()) {  // positional
      o["positional"] = opt->get_name();
    }
    // Flags expect no items; CLI11 appends validator text to the type name ("a|b:{a,b}").
    o["takes_value"] = opt->get_items_expected_max() != 0;
    std::string type_name = opt->get_type_name();
    o["value_name"] = type_name.substr(0, type_name.find(':'));
    o["description"] = opt->get_description();
    out.push_back(o);
  }
  return out;
}

}  // namespace

nlohmann::json help_spec(const std::string& family, const CLI::App& app) {
  nlohmann::json doc;
  doc["family"] = family;
  doc["description"] = app.get_description();
  doc["options"] = options_of(app);
  doc["commands"] = nlohmann::json::array();
  for (const CLI::App* sub : app.get_subcommands({})) {
    nlohmann::json c;
    c["name"] = sub->get_name();
    c["description"] = sub->get_description();
    c["options"] = options_of(*sub);
    doc["commands"].push_back(c);
  }
  return doc;
}

}  // namespace shardctl::cli
