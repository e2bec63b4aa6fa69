// The frame every shardctl-<family> binary is built on: one definition of each command and
// its options feeds the parser, --help, and the hidden --help-spec dump that completions and
// the docs-agreement test read. Global options (shardctl(1), GLOBAL OPTIONS) are added here, once. CLI11 stays in
// family.cpp: a family sees only cli::App and cli::Option (cli/app.hpp says why).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/app.hpp"
#include "cli/context.hpp"

namespace shardctl::cli {

using Handler = std::function<void(Context&)>;

class Family {
 public:
  // `name` is the family as typed after `shardctl` ("shard", "init").
  Family(std::string name, std::string description);
  // The --format check refers to formats_, so a Family stays where it was built.
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;
  ~Family();

  // Adds a subcommand run by `handler`; define its options on the returned App.
  App* command(const std::string& name, const std::string& description, Handler handler);
  // For families that are one command (init, lookup): the handler of the family itself.
  void root_handler(Handler handler);

  App& app() noexcept { return commands_.front(); }

  // Adds output formats this family accepts beyond text and json (check adds nagios); the
  // other families keep refusing them.
  void allow_formats(const std::vector<std::string>& extra);

  // Parses argv, runs the chosen handler, maps every error to its exit code (shardctl(1), EXIT STATUS) and prints
  // it as one line (plus a hint line) on stderr. Returns the process exit code.
  int main(int argc, char** argv);

 private:
  int run();  // the parsed command; its exit code

  std::string name_;
  std::unique_ptr<CLI::App> app_;
  std::deque<Option> options_;  // what App::add_option returned, for every App below
  std::deque<App> commands_;    // the family itself, then each command()
  GlobalOptions globals_;
  std::vector<std::string> formats_{"text", "json"};
  CLI::Option* format_option_ = nullptr;
  std::vector<std::pair<CLI::App*, Handler>> handlers_;
  Handler root_;
};

}  // namespace shardctl::cli
