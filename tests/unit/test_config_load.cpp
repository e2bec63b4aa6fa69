#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "config/config.hpp"
#include "config_support.hpp"
#include "core/error.hpp"

using namespace shardctl;
namespace fs = std::filesystem;

namespace {

// A fresh temp dir as cwd with config-related env vars cleared; all restored on exit.
class Scratch {
 public:
  Scratch() : old_cwd_(fs::current_path()) {
    char tmpl[] = "/tmp/shardctl-cfg-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fs::current_path(dir_);
    for (const char* v : {"SHARDCTL_CONFIG", "XDG_CONFIG_HOME", "HOME"}) {
      if (const char* val = std::getenv(v)) saved_.emplace_back(v, val);
      unsetenv(v);
    }
  }
  ~Scratch() {
    fs::current_path(old_cwd_);
    fs::remove_all(dir_);
    for (const char* v : {"SHARDCTL_CONFIG", "XDG_CONFIG_HOME", "HOME"}) unsetenv(v);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
  }
  const fs::path& dir() const { return dir_; }
  fs::path write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
    return dir_ / rel;
  }

 private:
  fs::path old_cwd_, dir_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

}  // namespace

TEST_CASE("the example of shardctl.toml(5) parses") {
  auto cfg = config::parse_config(R"(catalog = "host=db0 dbname=shardctl_catalog"

[defaults]
batch_size = 1000
parallel = 4

[[archive.job]]
name = "old-orders"
table = "public.orders"
where = "created_at < now() - interval '400 days'"
cascade = true
to = "dir:/var/lib/shardctl/archive"   # or "postgres:host=arch dbname=archive"
)",
                                  "x.toml");
  CHECK(cfg.catalog == "host=db0 dbname=shardctl_catalog");
  CHECK(cfg.batch_size == 1000);
  CHECK(cfg.parallel == 4);
  REQUIRE(cfg.archive_jobs.size() == 1);
  CHECK(cfg.archive_jobs[0].name == "old-orders");
  CHECK(cfg.archive_jobs[0].cascade);
  CHECK(cfg.archive_jobs[0].to == "dir:/var/lib/shardctl/archive");
}

TEST_CASE("empty config gives defaults") {
  auto cfg = config::parse_config("", "x.toml");
  CHECK_FALSE(cfg.catalog.has_value());
  CHECK(cfg.batch_size == 1000);
  CHECK(cfg.parallel == 4);
}

TEST_CASE("fence_grace is a duration, kept as a PostgreSQL interval") {
  CHECK(config::grace_interval("7d") == "7 days");
  CHECK(config::grace_interval("12h") == "12 hours");
  CHECK(config::grace_interval("30m") == "30 minutes");
  CHECK(config::grace_interval("45s") == "45 seconds");
  CHECK_FALSE(config::grace_interval(""));
  CHECK_FALSE(config::grace_interval("d"));
  CHECK_FALSE(config::grace_interval("7"));
  CHECK_FALSE(config::grace_interval("7w"));
  CHECK_FALSE(config::grace_interval("1 day"));
  CHECK_FALSE(config::grace_interval("-1d"));
  CHECK_FALSE(config::grace_interval("1234567890d"));
  CHECK(config::parse_config("[defaults]\nfence_grace = \"2h\"\n", "cfg.toml").fence_grace == "2 hours");
  CHECK_FALSE(config::parse_config("", "cfg.toml").fence_grace);
  CHECK(test::config_error_of("[defaults]\nfence_grace = \"soon\"\n").find("cfg.toml:2:15: ") == 0);
}

TEST_CASE("max_connections_per_server is a whole number of at least 1, unset by default") {
  CHECK_FALSE(config::parse_config("", "cfg.toml").max_connections_per_server);
  CHECK(config::parse_config("[defaults]\nmax_connections_per_server = 8\n", "cfg.toml").max_connections_per_server == 8);
  CHECK(test::config_error_of("[defaults]\nmax_connections_per_server = 0\n") ==
        "cfg.toml:2:30: \"defaults.max_connections_per_server\" must be at least 1");
  CHECK(test::config_error_of("[defaults]\nmax_connections_per_server = \"8\"\n").find("cfg.toml:2:") == 0);
}

TEST_CASE("errors cite file:line:col") {
  CHECK(test::config_error_of("catalog = \"x\"\n[defaults]\nbatchsize = 10\n") == "cfg.toml:3:1: unknown key \"defaults.batchsize\"");
  CHECK(test::config_error_of("catalgo = \"x\"\n") == "cfg.toml:1:1: unknown key \"catalgo\"");
  CHECK(test::config_error_of("[defaults]\nbatch_size = \"ten\"\n") ==
        "cfg.toml:2:14: \"defaults.batch_size\" must be an integer, not a string");
  CHECK(test::config_error_of("[defaults]\nparallel = 0\n") == "cfg.toml:2:12: \"defaults.parallel\" must be at least 1");
  CHECK(test::config_error_of("catalog = \n").rfind("cfg.toml:1:", 0) == 0);
  CHECK(test::config_error_of("[[archive.job]]\nname = \"a\"\ntable = \"t\"\nwhere = \"true\"\n").find("missing the required key \"to\"") !=
        std::string::npos);
  CHECK(test::config_error_of("[[archive.job]]\nname = \"a\"\ntable = \"t\"\nwhere = \"true\"\nto = \"s3:x\"\n").rfind("cfg.toml:5:", 0) == 0);
  CHECK(test::config_error_of("[[archive.job]]\nname = \"a\"\ntable = \"t\"\nwhere = \"1\"\nto = \"dir:/a\"\nbogus = 1\n") ==
        "cfg.toml:6:1: unknown key \"archive.job[0].bogus\"");
}

TEST_CASE("unknown keys get a suggestion") {
  try {
    config::parse_config("[defaults]\nbatchsize = 1\n", "c.toml");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.hint() == "did you mean \"batch_size\"?");
  }
}

TEST_CASE("config location precedence") {
  Scratch s;
  CHECK_FALSE(config::locate_config(std::nullopt).has_value());
  auto xdg = s.write("xdg/shardctl/config.toml", "catalog = \"dbname=xdg\"\n");
  setenv("XDG_CONFIG_HOME", (s.dir() / "xdg").c_str(), 1);
  CHECK(config::load_config(std::nullopt).catalog == "dbname=xdg");
  s.write("shardctl.toml", "catalog = \"dbname=cwd\"\n");
  CHECK(config::load_config(std::nullopt).catalog == "dbname=cwd");
  auto env = s.write("env.toml", "catalog = \"dbname=env\"\n");
  setenv("SHARDCTL_CONFIG", env.c_str(), 1);
  CHECK(config::load_config(std::nullopt).catalog == "dbname=env");
  auto flag = s.write("flag.toml", "catalog = \"dbname=flag\"\n");
  CHECK(config::load_config(flag.string()).catalog == "dbname=flag");
  CHECK_THROWS_AS(config::load_config((s.dir() / "missing.toml").string()), Error);
  setenv("SHARDCTL_CONFIG", (s.dir() / "missing.toml").c_str(), 1);
  CHECK_THROWS_AS(config::load_config(std::nullopt), Error);
}

TEST_CASE("~/.config is the default XDG config home") {
  Scratch s;
  setenv("HOME", s.dir().c_str(), 1);
  s.write(".config/shardctl/config.toml", "catalog = \"dbname=home\"\n");
  CHECK(config::load_config(std::nullopt).catalog == "dbname=home");
}

TEST_CASE("archive jobs take batch_size and durations, and refuse bad ones at file:line:col") {
  auto cfg = config::parse_config(R"([[archive.job]]
name = "old"
table = "orders"
where = "true"
to = "dir:/tmp/a"
batch_size = 500
max_runtime = "10m"
sleep = "250ms"
max_lag = "30s"
)", "job.toml");
  REQUIRE(cfg.archive_jobs.size() == 1);
  const auto& job = cfg.archive_jobs[0];
  CHECK(job.batch_size == 500);
  CHECK(job.max_runtime == std::chrono::minutes(10));
  CHECK(job.sleep == std::chrono::milliseconds(250));
  CHECK(job.max_lag == std::chrono::seconds(30));
  CHECK(config::parse_duration("7d") == std::chrono::hours(168));
  CHECK_FALSE(config::parse_duration("10").has_value());
  CHECK_FALSE(config::parse_duration("ten s").has_value());
  CHECK_FALSE(config::parse_duration("5 m").has_value());
  for (const char* bad : {"batch_size = 0", "sleep = \"soon\"", "max_lag = 30", "batchsize = 5"}) {
    CAPTURE(bad);
    try {
      config::parse_config(std::string("[[archive.job]]\nname = \"x\"\ntable = \"t\"\nwhere = \"true\"\nto = \"dir:/a\"\n") +
                               bad + "\n",
                           "job.toml");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK(std::string(e.what()).rfind("job.toml:6:", 0) == 0);
    }
  }
}

TEST_CASE("a value of the wrong type is named with the words it has always had") {
  CHECK(test::config_error_of("[[archive.job]]\nname = \"a\"\ntable = \"t\"\nwhere = \"true\"\nto = \"dir:/a\"\ncascade = 1\n")
            .find("\"archive.job[0].cascade\" must be true or false, not an integer") != std::string::npos);
  CHECK(test::config_error_of("archive = { job = 1 }\n").find("\"archive.job\" must be an array of tables ([[...]]), not") !=
        std::string::npos);
  CHECK(test::config_error_of("[check]\nwarning = \"orphans\"\n").find("\"check.warning\" must be an array of strings, not a string") !=
        std::string::npos);
}
