// Validators for whole-number options, with an error an operator can read. CLI11's own
// PositiveNumber and NonNegativeNumber print the whole double range ("not in range
// 0.000000 to 1797693…") when they refuse a value.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace shardctl::cli {

// A whole number of at least `min` (and at most `max`): "--parallel 0" is a usage error
// saying so. The help shows only the option's type name (N, SECONDS).
inline constexpr long long kNoLimit = 1'000'000'000;

inline CLI::Validator whole_number(long long min, long long max = kNoLimit) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return "'" + text + "' is not a whole number " +
                 (max == kNoLimit ? "of at least " + std::to_string(min)
                                  : "from " + std::to_string(min) + " to " + std::to_string(max));
        return {};
      },
      "");
}

}  // namespace shardctl::cli
