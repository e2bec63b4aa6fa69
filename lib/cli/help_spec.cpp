#include "cli/help_spec.hpp"

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace shardctl::cli {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + 1)
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

bool is_word(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return true;
}

// The values an option accepts when the parser enumerates them: a CLI::IsMember validator
// (CLI11 appends ":{a,b}" to the type name), else a type name that is a list "a|b|c" (the
// --format of each family: text|json, plus what the family allows). Empty when any value goes.
nlohmann::json allowed_values(const std::string& type_name) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& part : split(type_name, ':'))
    if (part.size() > 2 && part.front() == '{' && part.back() == '}') {
      for (const auto& v : split(part.substr(1, part.size() - 2), ',')) out.push_back(v);
      return out;
    }
  auto alternatives = split(type_name.substr(0, type_name.find(':')), '|');
  if (alternatives.size() < 2) return out;
  for (const auto& v : alternatives)
    if (!is_word(v)) return out;
  for (const auto& v : alternatives) out.push_back(v);
  return out;
}

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
    o["values"] = allowed_values(type_name);
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
