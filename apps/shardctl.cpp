// The `shardctl` dispatcher. It runs `shardctl-<family>` with the arguments it was given;
// global options written before the family name are passed on too.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/build_info.hpp"
#include "cli/dispatch.hpp"
#include "complete_names.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using namespace shardctl;

namespace {

// The families built with this dispatcher, each with the summary its own cli::Family gives:
// generated at build time from every shardctl-<family>'s --help-spec (cmake/family_docs.cmake).
const cli::BuiltinFamilies& builtin_families() {
  static const cli::BuiltinFamilies families = {
#include "builtin_families.inc"
  };
  return families;
}

fs::path self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

// Installed, the families live in libexec (SHARDCTL_LIBEXEC_FROM_BIN, relative to bin, from
// GNUInstallDirs); in a build tree they sit beside the dispatcher.
std::vector<fs::path> family_dirs(const fs::path& dir) {
  return cli::search_dirs(dir, dir / SHARDCTL_LIBEXEC_FROM_BIN);
}

void print_usage(const fs::path& dir) {
  std::cout << "shardctl - administer sharded PostgreSQL fleets\n\n"
               "Usage: shardctl [GLOBAL OPTIONS] COMMAND [ARGS...]\n\n"
               "Commands:\n";
  auto families = cli::discover_families(builtin_families(), family_dirs(dir));
  for (const auto& f : families) {
    std::string desc = f.plugin ? "(plugin: " + f.path.string() + ")" : f.description;
    std::string name = f.name;
    name.resize(std::max<std::size_t>(name.size(), 10), ' ');
    std::cout << "  " << name << "  " << desc << '\n';
  }
  std::cout << "  help        Show the manual page of a command: shardctl help COMMAND (or: shardctl help routing)\n\n"
               "Global options (every command):\n"
               "  -c, --config FILE   TOML config (default: $SHARDCTL_CONFIG, ./shardctl.toml,\n"
               "                      $XDG_CONFIG_HOME/shardctl/config.toml)\n"
               "  --catalog DSN       catalog connection string (also $SHARDCTL_CATALOG)\n"
               "  --format text|json  output format\n"
               "  -q, --quiet         less output on stderr\n"
               "  -v, --verbose       more output on stderr\n"
               "  --dry-run           print what a mutating command would do; change nothing\n"
               "  -y, --yes           do not ask for confirmation\n"
               "  --version           print the version and the git commit it was built from\n"
               "  -h, --help          this help; `shardctl COMMAND --help` for a command\n\n"
               "Exit codes: 0 ok, 1-3 check findings, 64 usage, 65 bad input data, 69 database\n"
               "unreachable, 70 internal error, 75 locked by another operation.\n";
}

[[noreturn]] void exec_or_die(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  std::cerr << "shardctl: error: cannot run " << args[0] << ": " << std::strerror(errno) << '\n';
  std::exit(exit_code::internal);
}

int show_manual(const std::string& topic, const fs::path& dir) {
  std::string page = topic.empty() ? "shardctl" : "shardctl-" + topic;
  // Relative to this binary only, never the source tree: the installed pages
  // (SHARDCTL_MAN_FROM_BIN, from GNUInstallDirs), or a build tree's copy in ../share/man.
  // Commands are in section 1; topics such as `routing` (shardctl-routing(7), for application
  // developers) in section 7.
  std::vector<fs::path> candidates;
  for (const char* section : {"1", "7"})
    for (const auto& base : {dir / SHARDCTL_MAN_FROM_BIN, dir / ".." / "share" / "man"})
      candidates.push_back(base / (std::string("man") + section) / (page + "." + section));
  for (const auto& file : candidates) {
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    for (const char* man : {"/usr/bin/man", "/bin/man"})
      if (access(man, X_OK) == 0) exec_or_die({man, "-l", file.string()});
    // No man(1) on this machine: show the page source, readable enough as text.
    exec_or_die({"/bin/cat", file.string()});
  }
  if (!topic.empty()) {
    if (auto path = cli::find_family(topic, family_dirs(dir))) exec_or_die({path->string(), "--help"});
    std::cerr << "shardctl: error: no manual page or command named '" << topic << "'\n";
    return exit_code::usage;
  }
  print_usage(dir);
  return exit_code::ok;
}

// `shardctl` with options but no command: --version, --help, or a usage error.
int no_command(int argc, char** argv, const fs::path& dir) {
  bool help = argc == 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--version") {
      std::cout << cli::version_line() << '\n';
      return exit_code::ok;
    }
    if (a == "-h" || a == "--help") help = true;
    bool known = a == "-h" || a == "--help" || a == "-q" || a == "--quiet" || a == "-v" ||
                 a == "--verbose" || a == "--dry-run" || a == "-y" || a == "--yes";
    bool takes_value = a == "-c" || a == "--config" || a == "--catalog" || a == "--format";
    if (takes_value) {
      ++i;
      continue;
    }
    if (!known) {
      std::cerr << "shardctl: error: unknown option '" << a << "'\nhint: see `shardctl --help`\n";
      return exit_code::usage;
    }
  }
  print_usage(dir);
  return help ? exit_code::ok : exit_code::usage;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = self_dir();
  int at = cli::family_index(argc, argv);
  if (at == argc) return no_command(argc, argv, dir);
  std::string family = argv[at];
  if (family == "help") return show_manual(at + 1 < argc ? argv[at + 1] : "", dir);
  if (family == "__complete") return apps::complete_names(argc, argv, at);
  auto path = cli::find_family(family, family_dirs(dir));
  if (!path) {
    std::cerr << "shardctl: error: unknown command '" << family << "'\n"
              << "hint: `shardctl --help` lists the commands; plugins are executables named "
                 "shardctl-NAME on PATH\n";
    return exit_code::usage;
  }
  std::vector<std::string> args{path->string()};
  for (int i = 1; i < argc; ++i)
    if (i != at) args.emplace_back(argv[i]);
  exec_or_die(args);
}
