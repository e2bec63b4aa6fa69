// [query] user: the role `shardctl query` connects as.
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "config_support.hpp"
#include "core/error.hpp"

using namespace shardctl;

TEST_CASE("[query] user names the role query connects as; unset by default") {
  CHECK_FALSE(config::parse_config("", "cfg.toml").query.user);
  CHECK_FALSE(config::parse_config("[query]\n", "cfg.toml").query.user);
  auto cfg = config::parse_config("[query]\nuser = \"shardctl_read\"\n", "cfg.toml");
  REQUIRE(cfg.query.user);
  CHECK(*cfg.query.user == "shardctl_read");
  CHECK(*config::parse_config("[query]\nuser = \"Read Only\"\n", "cfg.toml").query.user == "Read Only");
}

TEST_CASE("[query] refuses unknown keys and names that are no role name, at file:line:col") {
  CHECK(test::config_error_of("[query]\nusr = \"r\"\n") == "cfg.toml:2:1: unknown key \"query.usr\"");
  CHECK(test::config_error_of("[query]\nuser = \"\"\n") == "cfg.toml:2:8: \"query.user\" must be a role name of 1 to 63 bytes");
  CHECK(test::config_error_of("[query]\nuser = \"" + std::string(64, 'r') + "\"\n") ==
        "cfg.toml:2:8: \"query.user\" must be a role name of 1 to 63 bytes");
  CHECK(test::config_error_of("[query]\nuser = \"a\\u0000b\"\n") == "cfg.toml:2:8: \"query.user\" must be a role name of 1 to 63 bytes");
  CHECK(test::config_error_of("[query]\nuser = 5\n").find("\"query.user\" must be a string, not an integer") != std::string::npos);
}
