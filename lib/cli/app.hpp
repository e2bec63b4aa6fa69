// cli::App and cli::Option: how a family binary declares its commands and options, without
// including CLI11. CLI11 is header-only: every translation unit that includes <CLI/CLI.hpp>
// parses it (3.5 s) and emits its inline code (the config writer, the help formatter, Option's
// constructor...) all over again, which made up three quarters of each family binary's object
// code and most of its compile time. These thin wrappers forward every call to the same CLI11
// call with the same variable type, in lib/cli's .cpp files, so CLI11 is compiled once and
// parsing, --help and every error message stay exactly what CLI11 makes of them. An option
// of a new variable type needs one more add_option overload here (and one line in app.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace shardctl::cli {

// A check of an option's value; made by IsMember, Range and whole_number (cli/checks.hpp).
class Validator {
 public:
  explicit Validator(std::shared_ptr<const CLI::Validator> impl) : impl_(std::move(impl)) {}
  const CLI::Validator& impl() const noexcept { return *impl_; }

 private:
  std::shared_ptr<const CLI::Validator> impl_;
};

// One of these words (the help shows "{a,b}" after the type name; --help-spec lists them).
Validator IsMember(std::vector<std::string> values);
// A number from min to max.
Validator Range(double min, double max);

// What an App::callback throws when a command lacks an option it needs one of ("--point or
// --range"): reported as CLI11 reports a missing required option, "NAME is required", exit 64.
class RequiredError : public std::runtime_error {
 public:
  explicit RequiredError(const std::string& name) : std::runtime_error(name + " is required"), name_(name) {}
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
};

// Each setter returns the option, so calls chain: add_option(...)->required()->type_name("N").
class Option {
 public:
  explicit Option(CLI::Option* impl) : impl_(impl) {}

  Option* required(bool value = true);
  // The value's name in --help ("N", "FILE"); FILE and DIR values may hold any bytes, every
  // other value must be UTF-8 (cli/family.cpp).
  Option* type_name(const std::string& name);
  Option* check(const Validator& validator);
  Option* delimiter(char separator);  // one argument holds several values: "a,b"
  Option* excludes(Option* other);
  Option* allow_extra_args(bool value = true);

 private:
  CLI::Option* impl_;
};

// A command (or a one-command family itself). The Family owns the Apps and their Options, so
// the pointers stay valid as long as it lives.
class App {
 public:
  App(CLI::App* impl, std::deque<Option>& options) : impl_(impl), options_(&options) {}

  // NAME is a positional argument, "--name" or "-n,--name" an option.
  Option* add_option(const std::string& name, std::string& variable, const std::string& description);
  Option* add_option(const std::string& name, int& variable, const std::string& description);
  Option* add_option(const std::string& name, std::optional<std::string>& variable, const std::string& description);
  Option* add_option(const std::string& name, std::optional<int>& variable, const std::string& description);
  Option* add_option(const std::string& name, std::optional<std::int64_t>& variable, const std::string& description);
  Option* add_option(const std::string& name, std::optional<double>& variable, const std::string& description);
  // Repeatable; every value is kept, in order.
  Option* add_option(const std::string& name, std::vector<std::string>& variable, const std::string& description);
  Option* add_flag(const std::string& name, bool& variable, const std::string& description);

  // Runs once the command's options are parsed, before its handler: a RequiredError thrown
  // here is a usage error like any other the parser reports.
  App* callback(std::function<void()> check);

 private:
  Option* keep(CLI::Option* option);

  CLI::App* impl_;
  std::deque<Option>* options_;
};

}  // namespace shardctl::cli
