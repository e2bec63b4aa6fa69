// Dumps a CLI11 command tree as JSON: families, commands, options and their value types.
// Completions and the docs-agreement test are generated from / checked against this, so the
// parser stays the one definition of every command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace shardctl::cli {

nlohmann::json help_spec(const std::string& family, const CLI::App& app);

}  // namespace shardctl::cli
