// What the unit tests of shardctl.toml share (test_config_*.cpp): the error a config text is
// refused with, read as the file cfg.toml.
#pragma once

#include <string>

#include "config/config.hpp"
#include "support.hpp"

namespace shardctl::test {

// The message of the bad-input error (65) parse_config refuses `text` with, read as cfg.toml;
// empty when it takes it.
inline std::string config_error_of(const std::string& text) {
  return data_error_of([&] { config::parse_config(text, "cfg.toml"); });
}

}  // namespace shardctl::test
