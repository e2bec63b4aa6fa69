#include "cli/family.hpp"

#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/build_info.hpp"
#include "cli/help_spec.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"

namespace shardctl::cli {
namespace {

// The option of that name in `app` or any of its subcommands, or null.
const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const auto* opt : app.get_options())
    if (opt->check_name(name)) return opt;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (const auto* opt = find_option(*sub, name)) return opt;
  return nullptr;
}

// What a value of an option's type is, said to whoever typed a wrong one.
std::string expected_value(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  if (type == "N") return "a whole number";
  if (type == "SECONDS") return "a number of seconds";
  if (type.find("UINT") != std::string::npos) return "a whole number, 0 or more";
  if (type.find("INT") != std::string::npos) return "a whole number";
  if (type.find("FLOAT") != std::string::npos || type.find("NUMBER") != std::string::npos) return "a number";
  return "a value of the form " + type;
}

// CLI11's "Could not convert: --batch-size = 8MB" as "--batch-size: '8MB' is not a whole
// number": which option, what it got, what it expects. Nothing for other parse errors.
std::optional<std::string> conversion_message(const CLI::App& app, const std::string& what) {
  constexpr std::string_view prefix = "Could not convert: ";
  if (what.rfind(prefix, 0) != 0) return std::nullopt;
  auto eq = what.find(" = ", prefix.size());
  if (eq == std::string::npos) return std::nullopt;
  std::string name = what.substr(prefix.size(), eq - prefix.size());
  std::string value = what.substr(eq + 3);
  const auto* opt = find_option(app, name);
  if (!opt) return std::nullopt;
  return name + ": '" + value + "' is not " + expected_value(*opt);
}


std::string join_formats(const std::vector<std::string>& formats) {
  std::string out;
  for (const auto& f : formats) out += (out.empty() ? "" : "|") + f;
  return out;
}

// Returns the --format option so a family can widen its allowed values.
CLI::Option* add_global_options(CLI::App& app, GlobalOptions& g, const std::vector<std::string>& formats) {
  app.add_option("-c,--config", g.config_path,
                 "TOML config file (default: $SHARDCTL_CONFIG, ./shardctl.toml, "
                 "$XDG_CONFIG_HOME/shardctl/config.toml)")
      ->type_name("FILE");
  app.add_option("--catalog", g.catalog, "Catalog connection string (also $SHARDCTL_CATALOG)")
      ->type_name("DSN");
  // The allowed values are read when the option is parsed, so allow_formats() can widen them.
  auto* format = app.add_option("--format", g.format, "Output format")
                     ->check(
                         [&formats](const std::string& value) -> std::string {
                           for (const auto& f : formats)
                             if (f == value) return {};
                           return value + " is not one of " + join_formats(formats);
                         })
                     ->type_name(join_formats(formats));
  auto* quiet = app.add_flag("-q,--quiet", g.quiet, "Less output on stderr");
  auto* verbose = app.add_flag("-v,--verbose", g.verbose, "More output on stderr");
  quiet->excludes(verbose);
  app.add_flag("--dry-run", g.dry_run, "Print what a mutating command would do; change nothing");
  app.add_flag("-y,--yes", g.yes, "Do not ask for confirmation of destructive commands");
  app.set_version_flag("--version", version_line());
  return format;
}

void print_error(const std::string& family, const std::string& message, const std::string& hint) {
  std::cerr << "shardctl " << family << ": error: " << message << '\n';
  if (!hint.empty()) std::cerr << "hint: " << hint << '\n';
}

// Names, keys, DSNs and SQL go to PostgreSQL (UTF-8) or into JSON: bytes that are not UTF-8 are
// refused where they enter, naming the argument. Paths (FILE, DIR) are the operating system's
// business and may hold any bytes.
void require_utf8_arguments(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type == "FILE" || type == "DIR") continue;
    for (const auto& value : opt->results())
      if (!valid_utf8(value))
        throw usage_error((opt->get_positional() ? "argument " : "option ") + opt->get_name() +
                              // a connection string may hold a password: never echoed
                              (type == "DSN" ? std::string() : " '" + printable(value) + "'") +
                              " is not valid UTF-8",
                          "names, keys and connection strings are UTF-8 text");
  }
  for (const CLI::App* sub : app.get_subcommands()) require_utf8_arguments(*sub);
}

// True when nobody reads standard output any more (a pipe whose reader exited, as in
// `shardctl lookup ... | head -1`): poll reports POLLERR on such a pipe, POLLHUP on a socket.
bool stdout_reader_gone() {
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

// What a failed write to standard output means for the exit code: a reader that went away is
// the normal end of `| head` (exit 0, as git does); anything else (a full disk) is an error.
int settle_stdout(const std::string& family, int code) {
  std::cout.flush();
  if (std::cout) return code;
  if (stdout_reader_gone()) return code;
  print_error(family, "cannot write to standard output", "is the disk full?");
  return code == exit_code::ok ? exit_code::unavailable : code;
}

}  // namespace

Family::Family(std::string name, std::string description)
    : name_(std::move(name)), app_(std::make_unique<CLI::App>(std::move(description), "shardctl " + name_)) {
  app_->fallthrough();  // lets global options follow the subcommand
  app_->require_subcommand(0, 1);
  format_option_ = add_global_options(*app_, globals_, formats_);
  // Hidden (empty group): dumps the command definitions as JSON for completions and docs.
  // main() answers it before parsing; it is declared so the parser accepts it.
  app_->add_flag("--help-spec")->group("");
  commands_.emplace_back(app_.get(), options_);
}

Family::~Family() = default;

App* Family::command(const std::string& name, const std::string& description, Handler handler) {
  auto* sub = app_->add_subcommand(name, description);
  sub->fallthrough();
  handlers_.emplace_back(sub, std::move(handler));
  return &commands_.emplace_back(sub, options_);
}

void Family::root_handler(Handler handler) { root_ = std::move(handler); }

void Family::allow_formats(const std::vector<std::string>& extra) {
  formats_.insert(formats_.end(), extra.begin(), extra.end());
  format_option_->type_name(join_formats(formats_));
}

int Family::main(int argc, char** argv) {
  // A closed pipe surfaces as a failed write (EPIPE) instead of killing the process: output
  // stops and the command ends quietly (settle_stdout), for every output path.
  std::signal(SIGPIPE, SIG_IGN);
  if (!root_ && !handlers_.empty()) app_->require_subcommand(1, 1);
  // --help-spec short-circuits parsing so required options do not get in the way.
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help-spec") {
      std::cout << help_spec(name_, *app_).dump(2) << '\n';
      return exit_code::ok;
    }
  try {
    app_->parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app_->exit(e);  // --help / --version
  } catch (const CLI::ParseError& e) {
    std::string msg = printable(conversion_message(*app_, e.what()).value_or(e.what()));
    print_error(name_, msg, "see `shardctl " + name_ + " --help`");
    return exit_code::usage;
  }
  return settle_stdout(name_, run());
}

int Family::run() {
  try {
    require_utf8_arguments(*app_);
    Context ctx(name_, globals_);
    // A malformed config stops every command, even one that would not read it: a typo must
    // not go unnoticed until the day the setting matters.
    ctx.config();
    for (auto& [sub, handler] : handlers_)
      if (sub->parsed()) {
        handler(ctx);
        return ctx.exit_status();
      }
    if (root_) {
      root_(ctx);
      return ctx.exit_status();
    }
    throw internal_error("no handler for this command");
  } catch (const Error& e) {
    print_error(name_, e.what(), e.hint());
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    print_error(name_, std::string("internal error: ") + e.what(), "this is a bug; please report it");
    return exit_code::internal;
  }
}

}  // namespace shardctl::cli
