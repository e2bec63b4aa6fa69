// The one place (with family.cpp and help_spec.cpp) where CLI11 is compiled; see app.hpp.
#include "cli/app.hpp"

#include <charconv>

#include <CLI/CLI.hpp>

#include "cli/checks.hpp"

namespace shardctl::cli {

Validator IsMember(std::vector<std::string> values) {
  return Validator(std::make_shared<CLI::IsMember>(std::move(values)));
}

Validator Range(double min, double max) { return Validator(std::make_shared<CLI::Range>(min, max)); }

// CLI11's own PositiveNumber and NonNegativeNumber print the whole double range ("not in range
// 0.000000 to 1797693…") when they refuse a value; this one names the range the option takes.
Validator whole_number(long long min, long long max) {
  return Validator(std::make_shared<CLI::Validator>(
      [min, max](std::string& text) -> std::string {
        long long value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return "'" + text + "' is not a whole number " +
                 (max == kNoLimit ? "of at least " + std::to_string(min)
                                  : "from " + std::to_string(min) + " to " + std::to_string(max));
        return {};
      },
      ""));
}

Option* Option::required(bool value) {
  impl_->required(value);
  return this;
}

Option* Option::type_name(const std::string& name) {
  impl_->type_name(name);
  return this;
}

Option* Option::check(const Validator& validator) {
  impl_->check(validator.impl());
  return this;
}

Option* Option::delimiter(char separator) {
  impl_->delimiter(separator);
  return this;
}

Option* Option::excludes(Option* other) {
  impl_->excludes(other->impl_);
  return this;
}

Option* Option::allow_extra_args(bool value) {
  impl_->allow_extra_args(value);
  return this;
}

Option* App::keep(CLI::Option* option) { return &options_->emplace_back(option); }

// Each overload instantiates CLI11's add_option for exactly the variable's type, as a call in
// an app did before: the conversion, the default type name and the number of values it takes
// all follow from that type.
Option* App::add_option(const std::string& name, std::string& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, int& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, std::optional<std::string>& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, std::optional<int>& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, std::optional<std::int64_t>& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, std::optional<double>& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_option(const std::string& name, std::vector<std::string>& variable, const std::string& description) {
  return keep(impl_->add_option(name, variable, description));
}
Option* App::add_flag(const std::string& name, bool& variable, const std::string& description) {
  return keep(impl_->add_flag(name, variable, description));
}

App* App::callback(std::function<void()> check) {
  impl_->callback([check = std::move(check)] {
    try {
      check();
    } catch (const RequiredError& e) {
      throw CLI::RequiredError(e.name());
    }
  });
  return this;
}

}  // namespace shardctl::cli
