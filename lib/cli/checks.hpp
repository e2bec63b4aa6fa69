// Validators for whole-number options, with an error an operator can read. CLI11's own
// PositiveNumber and NonNegativeNumber print the whole double range ("not in range
// 0.000000 to 1797693…") when they refuse a value.
#pragma once

#include "cli/app.hpp"

namespace shardctl::cli {

// A whole number of at least `min` (and at most `max`): "--parallel 0" is a usage error
// saying so. The help shows only the option's type name (N, SECONDS).
inline constexpr long long kNoLimit = 1'000'000'000;

Validator whole_number(long long min, long long max = kNoLimit);  // defined in app.cpp

}  // namespace shardctl::cli
