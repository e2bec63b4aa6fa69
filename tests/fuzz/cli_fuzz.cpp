// shardctl-cli-fuzz: drives the real `shardctl` binaries with generated argv, stdin, config files
// and environments against a live catalog, and fails on anything shardctl(1) calls a bug: exit 70, a
// signal, a sanitizer report, a hang (or runaway memory), a printed password, or an exit code
// outside the set shardctl(1) documents. See tests/fuzz/README.md.
//
// Every case draws from its own generator seeded by (--seed, case number), so `--case N`
// regenerates case N exactly. (The catalog's state is shared by all cases: a case that depends on
// what earlier cases created may need the earlier cases too: `--cases N+1`.)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------------------------
// Constants the checks look for.

// The secret planted as a password in generated DSNs and configs. Every case uses this prefix plus
// its own number, so a leak names the case that planted it. It must never be printed.
constexpr std::string_view kMarker = "Zq7SecretPw";

std::string percent_encode_all(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("%{:02X}", c);
  return out;
}

// Sanitizer reports on stderr.
const std::vector<std::string> kSanitizerNeedles = {
    "ERROR: AddressSanitizer", "AddressSanitizer:DEADLYSIGNAL", "runtime error:", "ERROR: LeakSanitizer",
    "ERROR: UndefinedBehaviorSanitizer", "WARNING: AddressSanitizer", "ThreadSanitizer", "MemorySanitizer"};

// ---------------------------------------------------------------------------------------------
// Small helpers.

std::string shell_quote(std::string_view s) {
  if (s.empty()) return "''";
  bool plain = true, printable = true;
  for (unsigned char c : s) {
    if (!(std::isalnum(c) || std::strchr("_./:=@%+,-", c))) plain = false;
    if (c < 0x20 || c >= 0x7f || c == '\'') printable = false;
  }
  if (plain) return std::string(s);
  if (printable) return "'" + std::string(s) + "'";
  std::string out = "$'";
  for (unsigned char c : s) {
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

// A shell-quoted argument, shortened when it is huge (the full one: --case N --verbose).
std::string show_arg(const std::string& a, std::size_t limit = 300) {
  if (a.size() <= limit) return shell_quote(a);
  return shell_quote(a.substr(0, limit)) + fmt::format("...[{} bytes in all]", a.size());
}

std::string show_argv(const std::vector<std::string>& args, bool full = false) {
  std::string out = "shardctl";
  std::size_t shown = 0;
  for (const auto& a : args) {
    if (!full && shown == 40) {
      out += fmt::format(" ...[{} more arguments]", args.size() - shown);
      break;
    }
    out += ' ';
    out += full ? shell_quote(a) : show_arg(a);
    ++shown;
  }
  return out;
}

std::vector<std::string> first_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size() && out.size() < n) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, std::min<std::size_t>(nl - pos, 400)));
    pos = nl + 1;
  }
  return out;
}

std::string escape_line(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGPIPE: return "SIGPIPE";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
  }
}

std::string replace_first(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
  return s;
}

void make_odd_file(const fs::path& p, const std::string& kind) {
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_directories(p.parent_path(), ec);
  bool ok = true;
  if (kind == "fifo") ok = mkfifo(p.c_str(), 0600) == 0;
  else if (kind == "dir") ok = fs::create_directory(p, ec);
  else if (kind.rfind("->", 0) == 0) fs::create_symlink(kind.substr(2), p, ec), ok = !ec;
  if (!ok) throw std::runtime_error("cannot make " + kind + " at " + p.string());
}

void write_file(const fs::path& p, const std::string& content) {
  // A FIFO, directory or link an earlier case left here goes first: opening a FIFO to write
  // would wait for a reader.
  std::error_code ec;
  auto st = fs::symlink_status(p, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) fs::remove_all(p, ec);
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

// ---------------------------------------------------------------------------------------------
// Deterministic random choices. (libstdc++'s distributions are deterministic for one build.)

struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t seed, std::uint64_t stream) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32), 0x5eedu};
    g.seed(seq);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, n - 1)(g); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(g) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
  std::string pick(std::initializer_list<const char*> v) { return std::string(*(v.begin() + below(v.size()))); }
  std::string pick(std::initializer_list<std::string> v) { return *(v.begin() + below(v.size())); }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
};

// ---------------------------------------------------------------------------------------------
// A case and its result.

struct Case {
  std::string gen;                      // generator name
  std::vector<std::string> args;        // argv after "shardctl"
  std::optional<std::string> stdin_data;
  std::vector<std::pair<std::string, std::optional<std::string>>> env;  // overrides; nullopt unsets
  fs::path cwd;                         // empty: the shared working directory
  std::vector<std::pair<fs::path, std::string>> files;  // written before the run
  // Made before the run, in place of whatever is there: "fifo", "dir", or "->TARGET" (a
  // symbolic link to TARGET).
  std::vector<std::pair<fs::path, std::string>> odd_files;
  bool close_stdout_early = false;      // close the read end of stdout after the first line
  std::string note;                     // what else a reader needs to reproduce it
};

struct Result {
  bool exited = false;
  int code = -1;
  int sig = 0;
  bool timed_out = false;
  bool rss_exceeded = false;
  long max_rss_mb = 0;
  bool exec_failed = false;
  std::string out, err;
  std::size_t out_total = 0, err_total = 0;
  std::set<std::string> out_hits, err_hits;  // needles seen anywhere in the whole stream
  double ms = 0;
};

// Captures a stream up to a cap and looks for needles in all of it (also beyond the cap, and
// across read boundaries).
struct Capture {
  std::string text;
  std::size_t total = 0;
  std::string tail;
  std::set<std::string> hits;
  const std::vector<std::string>* needles;
  std::size_t cap;

  void add(const char* data, std::size_t n) {
    total += n;
    if (text.size() < cap) text.append(data, std::min(n, cap - text.size()));
    std::string window = tail;
    window.append(data, n);
    for (const auto& nd : *needles)
      if (window.find(nd) != std::string::npos) hits.insert(nd);
    std::size_t keep = 64;
    tail = window.size() > keep ? window.substr(window.size() - keep) : window;
  }
};

// ---------------------------------------------------------------------------------------------
// Options and the fleet the cases run against.

struct MapInfo {
  std::string name, kind, key_type;
};

struct Options {
  fs::path bin;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> cases;
  std::optional<double> seconds;
  std::vector<std::uint64_t> only_cases;
  std::set<std::string> only_gens;
  double timeout = 10;
  fs::path workdir;
  bool verbose = false;
  bool setup = true;
  bool strict_json = false;
  bool list_only = false;
  std::size_t audit_every = 25;
  long max_rss_mb = 1024;
  std::size_t capture_cap = 4u << 20;
  std::string catalog;
};

struct Fleet {
  std::vector<std::string> shards;  // registered at setup
  std::vector<MapInfo> maps;        // every map at setup
  std::vector<MapInfo> fz_maps;     // the harness's own maps (free to mutate)
  std::string catalog;              // key=value or URI, as given
  std::map<std::string, std::string> catalog_kv;  // parsed when key=value
};

struct Failure {
  std::uint64_t case_no;
  std::string gen;
  std::string reasons;
  std::string text;  // the full report
};

class Harness;
// A generator makes case `case_no` from its random stream and its stratum: the value of its main
// choice (a DSN form, a command, a map type...). Strata are dealt like cards: each run of
// `strata` cases of one generator covers every stratum once, in a shuffled order, so a short run
// covers every form instead of leaving some to luck.
using Generator = std::function<Case(Rng&, std::uint64_t case_no, std::size_t stratum)>;

// ---------------------------------------------------------------------------------------------
// Running one process.

class Runner {
 public:
  Runner(const Options& o, std::map<std::string, std::string> base_env, std::vector<std::string> needles)
      : opt_(o), base_env_(std::move(base_env)), out_needles_(needles), err_needles_(std::move(needles)) {
    for (const auto& s : kSanitizerNeedles) err_needles_.push_back(s);
  }

  Result run(const Case& c, const fs::path& default_cwd, const fs::path& stdin_file) {
    Result r;
    for (const auto& [p, content] : c.files) write_file(p, content);
    for (const auto& [p, kind] : c.odd_files) make_odd_file(p, kind);
    if (c.stdin_data) write_file(stdin_file, *c.stdin_data);

    std::vector<std::string> argv_s{(opt_.bin / "shardctl").string()};
    argv_s.insert(argv_s.end(), c.args.begin(), c.args.end());
    // The kernel refuses exec (E2BIG) of one argument over MAX_ARG_STRLEN (32 pages): such a
    // case could never reach shardctl, so the argument is cut to fit.
    constexpr std::size_t max_arg = 32 * 4096 - 1;
    for (auto& a : argv_s)
      if (a.size() > max_arg) a.resize(max_arg);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto env_map = base_env_;
    for (const auto& [k, v] : c.env) {
      if (v) env_map[k] = *v;
      else env_map.erase(k);
    }
    std::vector<std::string> env_s;
    for (const auto& [k, v] : env_map) env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    fs::path cwd = c.cwd.empty() ? default_cwd : c.cwd;
    std::string cwd_s = cwd.string();
    std::string in_path = c.stdin_data ? stdin_file.string() : std::string("/dev/null");

    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    int in_fd = open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in_fd < 0) throw std::runtime_error("cannot open " + in_path);

    auto start = Clock::now();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);
      // The harness ignores SIGPIPE; the program under test must get the default disposition.
      signal(SIGPIPE, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      dup2(in_fd, 0);
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
      if (chdir(cwd_s.c_str()) != 0) _exit(126);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    setpgid(pid, pid);
    close(in_fd);
    close(out_pipe[1]);
    close(err_pipe[1]);

    Capture out{.text = {}, .total = 0, .tail = {}, .hits = {}, .needles = &out_needles_, .cap = opt_.capture_cap};
    Capture err{.text = {}, .total = 0, .tail = {}, .hits = {}, .needles = &err_needles_, .cap = opt_.capture_cap};
    int fds[2] = {out_pipe[0], err_pipe[0]};
    auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.timeout));
    std::optional<Clock::time_point> exited_at;
    bool child_done = false;  // exited (zombie, not reaped yet)
    std::vector<char> buf(65536);
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    auto last_rss_check = start;

    while (true) {
      auto now = Clock::now();
      if (!child_done && now >= deadline) {
        r.timed_out = true;
        break;
      }
      if (child_done && (fds[0] < 0 && fds[1] < 0)) break;
      // A process that exited but left a descendant holding the pipes: stop after a grace.
      if (child_done && now - *exited_at > std::chrono::seconds(2)) break;
      std::vector<pollfd> pfds;
      for (int fd : fds)
        if (fd >= 0) pfds.push_back({fd, POLLIN, 0});
      int wait_ms = 50;
      if (!pfds.empty()) {
        int n = poll(pfds.data(), pfds.size(), wait_ms);
        if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        for (auto& p : pfds) {
          if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
          ssize_t got = read(p.fd, buf.data(), buf.size());
          int idx = p.fd == fds[0] ? 0 : 1;
          if (got <= 0) {
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            close(fds[idx]);
            fds[idx] = -1;
            continue;
          }
          (idx == 0 ? out : err).add(buf.data(), static_cast<std::size_t>(got));
          if (idx == 0 && c.close_stdout_early && out.text.find('\n') != std::string::npos) {
            close(fds[0]);  // the reader goes away, as `| head -1` does
            fds[0] = -1;
          }
        }
      } else {
        usleep(wait_ms * 1000);
      }
      if (!child_done) {
        siginfo_t info{};
        if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
          child_done = true;
          exited_at = Clock::now();
        } else if (Clock::now() - last_rss_check > std::chrono::milliseconds(50)) {
          last_rss_check = Clock::now();
          long rss_mb = rss_of(pid, page_kb);
          r.max_rss_mb = std::max(r.max_rss_mb, rss_mb);
          if (rss_mb > opt_.max_rss_mb) {
            r.rss_exceeded = true;
            break;
          }
        }
      }
    }
    // Whatever is left of the process group goes (the leader, if it has not exited, is killed;
    // an exited leader is still a zombie here, so its pid is not reused yet).
    kill(-pid, SIGKILL);
    for (int& fd : fds)
      if (fd >= 0) {
        // Drain what is already buffered without blocking.
        fcntl(fd, F_SETFL, O_NONBLOCK);
        ssize_t got;
        while ((got = read(fd, buf.data(), buf.size())) > 0)
          (&fd == &fds[0] ? out : err).add(buf.data(), static_cast<std::size_t>(got));
        close(fd);
        fd = -1;
      }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!r.timed_out && !r.rss_exceeded) {
      if (WIFEXITED(status)) {
        r.exited = true;
        r.code = WEXITSTATUS(status);
        if (r.code == 127 || r.code == 126) r.exec_failed = err.total == 0;
      } else if (WIFSIGNALED(status)) {
        r.sig = WTERMSIG(status);
      }
    }
    r.out = std::move(out.text);
    r.err = std::move(err.text);
    r.out_total = out.total;
    r.err_total = err.total;
    r.out_hits = std::move(out.hits);
    r.err_hits = std::move(err.hits);
    return r;
  }

 private:
  static long rss_of(pid_t pid, long page_kb) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * page_kb / 1024;
  }

  const Options& opt_;
  std::map<std::string, std::string> base_env_;
  std::vector<std::string> out_needles_, err_needles_;
};

// ---------------------------------------------------------------------------------------------
// Value generators.

const std::vector<std::string> kInvalidUtf8 = {
    "\xff", "\xfe", "\xc3\x28", "\xa0\xa1", "\xe2\x28\xa1", "\xe2\x82", "\xf0\x28\x8c\xbc", "\xf0\x90\x28\xbc",
    "\xc0\xaf",              // overlong '/'
    "\xe0\x80\xaf",          // overlong '/'
    "\xc0\x80",              // overlong NUL
    "\xed\xa0\x80",          // UTF-16 surrogate
    "\xf4\x90\x80\x80",      // above U+10FFFF
    "\xf8\x88\x80\x80\x80",  // 5-byte form
    "\x80",
};

const std::vector<std::string> kValidUnicode = {"é", "Ünïcödé", "日本語", "😀", "e\xcc\x81", "\xef\xbb\xbf", "Ω≈ç√",
                                                 "ﬃ", "\xe2\x80\xae" "rtl", "\xc2\xa0", "Ａ１"};

std::string invalid_utf8(Rng& r) {
  std::string s = r.pick(kInvalidUtf8);
  if (r.chance(0.5)) s = "k" + s;
  if (r.chance(0.4)) s += "x";
  return s;
}

std::string control_chars(Rng& r) {
  std::string s;
  auto n = 1 + r.below(6);
  for (std::uint64_t i = 0; i < n; ++i) {
    int c = r.chance(0.15) ? 0x7f : static_cast<int>(1 + r.below(31));
    s += static_cast<char>(c);
  }
  if (r.chance(0.5)) s = "a" + s + "b";
  return s;
}

std::string random_bytes(Rng& r, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<char>(1 + r.below(255));
  return s;
}

std::string huge(Rng& r) {
  std::size_t n = r.chance(0.5) ? 1000 + r.below(9000) : 10000 + r.below(90000);
  if (r.chance(0.5)) return std::string(n, static_cast<char>('a' + r.below(26)));
  std::string s;
  while (s.size() < n) s += static_cast<char>(0x20 + r.below(0x5f));
  return s;
}

std::string word(Rng& r, std::size_t lo = 1, std::size_t hi = 10) {
  std::size_t n = lo + r.below(hi - lo + 1);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + r.below(26));
  return s;
}

// Anything that is not meant to parse.
std::string garbage(Rng& r) {
  switch (r.below(12)) {
    case 0: return "";
    case 1: return r.pick({" ", "\t", "  \t ", "\xc2\xa0", "\r", " x "});
    case 2: return control_chars(r);
    case 3: return invalid_utf8(r);
    case 4: return random_bytes(r, 1 + r.below(40));
    case 5: return huge(r);
    case 6: return r.pick(kValidUnicode);
    case 7: return r.pick({"'", "\"", "\\", "''", "\"\"", "'; drop table x; --", "%s%n%x%p", "${HOME}", "$(id)", "`id`",
                           "a'b", "a\"b", "a\\b", "{}", "[]", "null", "NULL", "\\N"});
    case 8: return r.pick({"-", "--", "-x", "--help", "--version", "-1", "--map", "--format=json", "-h"});
    case 9: return word(r) + invalid_utf8(r) + word(r);
    case 10: return r.pick({"nan", "NaN", "inf", "-inf", "Infinity", "1e308", "0x7fffffff", "0b1", "1_0", "١٢٣"});
    default: return word(r, 1, 30);
  }
}

const std::vector<std::string> kIntBoundaries = {"0", "-0", "1", "-1", "2147483647", "-2147483648", "2147483648",
                                                  "-2147483649", "4294967295", "4294967296"};
const std::vector<std::string> kBigintBoundaries = {"9223372036854775807", "-9223372036854775808",
                                                     "9223372036854775808", "-9223372036854775809",
                                                     "18446744073709551615", "18446744073709551616",
                                                     "99999999999999999999999999999", "-99999999999999999999999999"};
const std::vector<std::string> kNumericOdd = {"+5", "05", "007", " 7", "7 ", "7\t", "\t7", "--3", "+-3", "0x10", "1e3",
                                              "1.5", "1.0", ".5", "5.", "1,000", "1 000", "٣", "１２", "5abc", "abc5", "-",
                                              "+", "0b101", "1_000", "∞", "０"};

std::string int_key(Rng& r, bool big) {
  switch (r.below(10)) {
    case 0:
    case 1:
    case 2: return std::to_string(r.between(-1000, 1000));
    case 3: return std::to_string(big ? r.between(INT64_MIN, INT64_MAX) : r.between(INT32_MIN, INT32_MAX));
    case 4:
    case 5: return r.pick(kIntBoundaries);
    case 6: return r.pick(kBigintBoundaries);
    case 7: return r.pick(kNumericOdd);
    default: return garbage(r);
  }
}

std::string uuid_valid(Rng& r) {
  std::uint64_t a = r.g(), b = r.g();
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff, b >> 48,
                     b & 0xffffffffffffULL);
}

std::string uuid_key(Rng& r) {
  std::string u = uuid_valid(r);
  switch (r.below(10)) {
    case 0:
    case 1:
    case 2: return u;
    case 3: {
      for (auto& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      return u;
    }
    case 4: return "{" + u + "}";
    case 5: {
      u.erase(std::remove(u.begin(), u.end(), '-'), u.end());
      return u;
    }
    case 6: return r.pick({"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                           "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
                           "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111", "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                           "a0eebc99_9c0b_4ef8_bb6d_6bb9bd380a11", "urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"});
    case 7: return u.substr(0, r.below(u.size()));
    case 8: return u + invalid_utf8(r);
    default: return garbage(r);
  }
}

std::string text_key(Rng& r) {
  switch (r.below(10)) {
    case 0:
    case 1:
    case 2: return word(r, 1, 12);
    case 3: return r.pick(kValidUnicode) + word(r, 0, 3);
    case 4: return invalid_utf8(r);
    case 5: return control_chars(r);
    case 6: return huge(r);
    case 7: return r.pick({"", " ", "a b", "A", "a\tb", "'", "\"", "\\", "%", "_", "..", "a..b", "-"});
    default: return garbage(r);
  }
}

std::string key_for(Rng& r, const std::string& key_type) {
  if (key_type == "int") return int_key(r, false);
  if (key_type == "bigint") return int_key(r, true);
  if (key_type == "uuid") return uuid_key(r);
  return text_key(r);
}

// A key that parses (for bounds and points that should be accepted).
std::string good_key(Rng& r, const std::string& key_type) {
  if (key_type == "int") return std::to_string(r.between(-100000, 100000));
  if (key_type == "bigint") return std::to_string(r.between(-10000000, 10000000));
  if (key_type == "uuid") return uuid_valid(r);
  return word(r, 1, 6);
}

// Names: shard, map, table, column and xref names, valid and not.
// A name with odd bytes: not UTF-8 (mostly), control characters, random bytes.
std::string byte_name(Rng& r) {
  switch (r.below(10)) {
    case 0:
    case 1: return control_chars(r);
    case 2: return random_bytes(r, 1 + r.below(20));
    case 3:
    case 4: return invalid_utf8(r);
    default: return "g" + invalid_utf8(r);
  }
}

std::string gen_name(Rng& r, std::uint64_t case_no, const fs::path& workdir) {
  switch (r.below(20)) {
    case 0:
    case 1:
    case 2: return "g" + word(r, 1, 8) + std::to_string(case_no);
    case 3: return "G" + word(r, 1, 4) + "Mixed" + std::to_string(case_no);
    case 4: return "\"g Quoted " + word(r, 1, 4) + "\"";
    case 5: return r.pick({"public.", "sales.", "\"Odd Schema\".", "a.b.", ".", ""}) + "g" + word(r, 1, 6);
    case 6: return "g" + word(r, 1, 3) + r.pick({" ", "  ", "\t", ".", "..", "-", "$", "#", "/", ":", ","}) + word(r, 1, 3);
    case 7: {
      std::size_t n = r.pick(std::vector<std::size_t>{62, 63, 64, 65, 100, 300, 5000});
      std::string s = "g";
      while (s.size() < n) s += static_cast<char>('a' + r.below(26));
      return s;
    }
    case 8:
    case 15:
    case 16: return "g" + invalid_utf8(r);
    case 9: return invalid_utf8(r);
    case 10: return "";
    case 11: return r.pick({"$(touch " + (workdir / "pwned").string() + ")", "`touch " + (workdir / "pwned").string() + "`",
                            ";touch " + (workdir / "pwned").string() + ";", "g|id", "g&&id", "g>x", "g<x", "g*", "g?",
                            "~g", "g\\", "g'", "g\"", "g\"\"x", "'g'", "g;--", "g%n%s"});
    case 12: return "g" + r.pick(kValidUnicode);
    case 13: return "g" + control_chars(r);
    case 14: return r.pick({"select", "SELECT", "user", "table", "\"select\"", "1abc", "_g", "-g", "--g"});
    default: return garbage(r);
  }
}

// ---------------------------------------------------------------------------------------------
// The harness.

class Harness {
 public:
  explicit Harness(Options o) : opt_(std::move(o)) {}

  int main() {
    prepare();
    if (opt_.setup && !opt_.list_only) setup();
    discover();
    register_generators();
    return run_all();
  }

 private:
  // -- setup -----------------------------------------------------------------------------------

  void prepare() {
    signal(SIGPIPE, SIG_IGN);
    if (!fs::exists(opt_.bin / "shardctl")) throw std::runtime_error("no shardctl in " + opt_.bin.string());
    opt_.bin = fs::absolute(opt_.bin);
    if (opt_.workdir.empty()) {
      char tmpl[] = "/tmp/shardctl-cli-fuzz.XXXXXX";
      if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
      opt_.workdir = tmpl;
    }
    opt_.workdir = fs::absolute(opt_.workdir);
    fs::create_directories(opt_.workdir);
    cwd_ = opt_.workdir / "cwd";
    fs::create_directories(cwd_);
    fs::create_directories(opt_.workdir / "xdg");
    fs::create_directories(opt_.workdir / "cfgdir");
    fs::create_directories(opt_.workdir / "cwdcfg");
    fs::create_directories(opt_.workdir / "xdgcfg" / "shardctl");
    fs::create_directories(opt_.workdir / "dir.toml");
    fs::create_directories(opt_.workdir / "files");
    std::error_code ec;
    fs::remove(opt_.workdir / "loop.toml", ec);
    fs::create_symlink("loop.toml", opt_.workdir / "loop.toml", ec);
    stdin_file_ = opt_.workdir / "stdin.bin";

    if (opt_.catalog.empty())
      if (const char* c = std::getenv("SHARDCTL_CATALOG")) opt_.catalog = c;
    if (opt_.catalog.empty()) throw std::runtime_error("no catalog: set SHARDCTL_CATALOG or pass --catalog");
    fleet_.catalog = opt_.catalog;
    if (opt_.catalog.find("://") == std::string::npos) {
      std::istringstream ss(opt_.catalog);
      std::string kv;
      while (ss >> kv) {
        auto eq = kv.find('=');
        if (eq != std::string::npos) fleet_.catalog_kv[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }

    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string s = *e;
      auto eq = s.find('=');
      if (eq == std::string::npos) continue;
      env[s.substr(0, eq)] = s.substr(eq + 1);
    }
    for (const char* k : {"SHARDCTL_CONFIG", "SHARDCTL_SANDBOX_DIR", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE",
                          "PGUSER", "PGPASSWORD", "PGSERVICE", "PGOPTIONS", "PGPASSFILE", "PGSERVICEFILE"})
      env.erase(k);
    env["SHARDCTL_CATALOG"] = opt_.catalog;
    env["XDG_CONFIG_HOME"] = (opt_.workdir / "xdg").string();
    env["PGCONNECT_TIMEOUT"] = "3";
    // A generated DSN without a host must not reach a server the machine happens to run on the
    // default socket (the catalog DSN names its host).
    env["PGHOST"] = "/nonexistent/shardctl-cli-fuzz";
    std::vector<std::string> needles{std::string(kMarker), percent_encode_all(kMarker)};
    runner_.emplace(opt_, std::move(env), std::move(needles));
  }

  // Runs a fixed command (setup, audit) and returns the result.
  Result run_fixed(std::vector<std::string> args, std::optional<std::string> stdin_data = std::nullopt) {
    Case c;
    c.gen = "fixed";
    c.args = std::move(args);
    c.stdin_data = std::move(stdin_data);
    return runner_->run(c, cwd_, stdin_file_);
  }

  void must(std::vector<std::string> args) {
    auto r = run_fixed(args);
    if (!r.exited || r.code != 0)
      throw std::runtime_error("setup command failed (exit " + std::to_string(r.code) + "): " + show_argv(args) + "\n" +
                               r.err);
  }

  nlohmann::json json_of(std::vector<std::string> args) {
    auto r = run_fixed(args);
    if (!r.exited || r.code != 0)
      throw std::runtime_error("setup command failed (exit " + std::to_string(r.code) + "): " + show_argv(args) + "\n" +
                               r.err);
    return nlohmann::json::parse(r.out);
  }

  // The harness's own maps: every kind x key type, with a few mappings, created when missing.
  void setup() {
    auto shards = json_of({"shard", "list", "--format", "json"});
    std::vector<std::string> names;
    for (const auto& s : shards["shards"]) names.push_back(s["name"].get<std::string>());
    for (const char* extra : {"fz_s1", "fz_s2"})
      if (names.size() < 2 && std::find(names.begin(), names.end(), extra) == names.end()) {
        must({"shard", "add", extra, "--dsn", "host=/nonexistent/fz dbname=fz"});
        names.push_back(extra);
      }
    const std::string s1 = names[0], s2 = names[1];
    for (const char* kind : {"list", "range", "hash"})
      for (const char* type : {"int", "bigint", "text", "uuid"}) {
        std::string name = std::string("fz_") + type + "_" + kind;
        auto probe = run_fixed({"map", "show", name});
        if (probe.exited && probe.code == 0) continue;
        std::vector<std::string> create{"map", "create", name, "--kind", kind, "--key-type", type};
        if (std::string(kind) == "hash") create.insert(create.end(), {"--shards", s1, "--shards", s2});
        must(create);
        std::string t = type;
        if (std::string(kind) == "list") {
          std::vector<std::string> points;
          if (t == "int" || t == "bigint") points = {"1", "2", "3", "-1", "1000"};
          if (t == "text") points = {"a", "b", "é", "tenant-1"};
          if (t == "uuid") points = {"00000000-0000-0000-0000-000000000001", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"};
          for (std::size_t i = 0; i < points.size(); ++i)
            must({"mapping", "add", "--map", name, "--point", points[i], "--shard", i % 2 ? s2 : s1});
        } else if (std::string(kind) == "range") {
          std::vector<std::string> ranges;
          if (t == "int" || t == "bigint") ranges = {"..0", "0..1000", "1000..5000"};
          if (t == "text") ranges = {"..m", "m..t", "t.."};
          if (t == "uuid")
            ranges = {"..80000000-0000-0000-0000-000000000000", "80000000-0000-0000-0000-000000000000.."};
          for (std::size_t i = 0; i < ranges.size(); ++i)
            must({"mapping", "add", "--map", name, "--range", ranges[i], "--shard", i % 2 ? s2 : s1});
        }
      }
    setup_archive_run();
  }

  // A directory archive run of a second's worth of one-row batches (each root row with the rows
  // that reference it) of the first sharded table: the `files` generator puts hostile manifests and files in its
  // directory for `archive restore` (a manifest needs the table's DDL and a file, which a run that archived
  // nothing lacks, for a restore to read the files it lists). Made once per workdir (kept in
  // WORKDIR/archive_run.json, which a replay reads). Without it those cases would restore a run
  // that does not exist and test nothing of a manifest, so a setup that cannot make one (no
  // sharded table, a failed run, a manifest without files) stops the harness with an error.
  void setup_archive_run() {
    fs::path saved = opt_.workdir / "archive_run.json";
    std::error_code ec;
    if (fs::exists(saved, ec)) {
      std::ifstream f(saved);
      auto doc = nlohmann::json::parse(f, nullptr, false);
      if (!doc.is_discarded() && doc.value("catalog", std::string()) == fleet_.catalog) return;
    }
    auto doc = json_of({"table", "list", "--format", "json"});
    std::string table;
    for (const auto& t : doc.value("tables", nlohmann::json::array()))
      if (t.value("kind", std::string()) == "sharded") {
        table = t.value("name", std::string());
        break;
      }
    if (table.empty())
      throw std::runtime_error("setup: the catalog has no sharded table to archive for the files generator (`table list`: " +
                               doc.dump() + ")");
    fs::path dir = opt_.workdir / "arch";
    std::vector<std::string> args{"archive", "run", "--table", table, "--name", "fuzz-files", "--where", "true", "--cascade",
                                  "--batch-size", "1", "--max-runtime", "1s", "--parallel", "1", "--to", "dir:" + dir.string(),
                                  "--format", "json"};
    // A run stopped by --max-runtime before its first batch (a loaded machine) wrote no file:
    // the same command continues it, a second at a time.
    for (int attempt = 1;; ++attempt) {
      auto run = json_of(args);
      auto id = run.value("id", std::string());
      if (id.empty()) throw std::runtime_error("setup: the archive run printed no id: " + run.dump());
      fs::path run_dir = dir / id;
      std::ifstream m(run_dir / "manifest.json");
      auto manifest = nlohmann::json::parse(m, nullptr, false);
      if (manifest.is_discarded() || !manifest.is_object())
        throw std::runtime_error("setup: archive run " + id + " left no readable manifest in " + run_dir.string());
      auto files = manifest.value("files", nlohmann::json::array());
      auto ddl = manifest.value("ddl", nlohmann::json::object());
      if (files.is_array() && !files.empty() && ddl.is_object() && !ddl.empty()) {
        std::ofstream(saved) << nlohmann::json{{"catalog", fleet_.catalog}, {"run", id}, {"dir", run_dir.string()}}.dump(2) << '\n';
        return;
      }
      if (attempt == 5)
        throw std::runtime_error("setup: archive run " + id + " wrote no file in " + std::to_string(attempt) +
                                 " tries of a second: " + manifest.dump());
    }
  }

  // The shards and maps cases choose from. Cases create more of both, so the first run writes
  // the lists to WORKDIR/fleet.json and later runs with that workdir and catalog (a replay of
  // one case) read them back: the same seed and case then give the same argv.
  void discover() {
    fs::path saved = opt_.workdir / "fleet.json";
    nlohmann::json doc;
    std::error_code ec;
    if (fs::exists(saved, ec)) {
      std::ifstream f(saved);
      doc = nlohmann::json::parse(f, nullptr, false);
      if (doc.is_discarded() || doc.value("catalog", std::string()) != fleet_.catalog) doc = nlohmann::json();
    }
    if (doc.is_null()) {
      doc["catalog"] = fleet_.catalog;
      doc["shards"] = nlohmann::json::array();
      auto shards = json_of({"shard", "list", "--format", "json"});  // (a temporary would die before the loop)
      for (const auto& s : shards["shards"]) doc["shards"].push_back(s["name"]);
      doc["maps"] = nlohmann::json::array();
      auto maps = json_of({"map", "list", "--format", "json"});
      for (const auto& m : maps["maps"])
        doc["maps"].push_back({{"name", m["name"]}, {"kind", m["kind"]}, {"key_type", m["key_type"]}});
      std::ofstream(saved) << doc.dump(2) << '\n';
    }
    for (const auto& s : doc["shards"]) fleet_.shards.push_back(s.get<std::string>());
    for (const auto& m : doc["maps"]) {
      MapInfo mi{m["name"].get<std::string>(), m["kind"].get<std::string>(), m["key_type"].get<std::string>()};
      fleet_.maps.push_back(mi);
      if (mi.name.rfind("fz_", 0) == 0) fleet_.fz_maps.push_back(mi);
    }
    std::sort(fleet_.shards.begin(), fleet_.shards.end());
    auto by_name = [](const MapInfo& a, const MapInfo& b) { return a.name < b.name; };
    std::sort(fleet_.maps.begin(), fleet_.maps.end(), by_name);
    std::sort(fleet_.fz_maps.begin(), fleet_.fz_maps.end(), by_name);
    if (fleet_.shards.empty() || fleet_.maps.empty())
      throw std::runtime_error("the catalog has no shards or no maps (run without --no-setup)");
    fs::path archive_saved = opt_.workdir / "archive_run.json";
    if (fs::exists(archive_saved, ec)) {
      std::ifstream f(archive_saved);
      auto a = nlohmann::json::parse(f, nullptr, false);
      if (!a.is_discarded() && a.value("catalog", std::string()) == fleet_.catalog) {
        archive_run_ = a.value("run", std::string());
        archive_dir_ = a.value("dir", std::string());
        std::ifstream m(archive_dir_ / "manifest.good.json");
        if (!m) {  // the manifest as the run wrote it, kept before any case replaces it
          fs::copy_file(archive_dir_ / "manifest.json", archive_dir_ / "manifest.good.json", ec);
          m.open(archive_dir_ / "manifest.good.json");
        }
        archive_manifest_ = nlohmann::json::parse(m, nullptr, false);
        if (archive_run_.empty() || archive_manifest_.is_discarded() || !archive_manifest_.is_object())
          throw std::runtime_error("the setup's archive run (" + archive_saved.string() + ") has no readable manifest in " +
                                   archive_dir_.string() + " (run with a fresh --workdir)");
      }
    }
    // The files generator's manifest cases need the setup's run (setup_archive_run).
    if (opt_.setup && !opt_.list_only && archive_run_.empty())
      throw std::runtime_error("setup: no archive run recorded in " + archive_saved.string() + " for this catalog");
    // The big-lookup map: the sample fleet's customers, else any int/bigint map.
    for (const auto& m : fleet_.maps)
      if (m.name == "customers") lookup_map_ = m;
    if (!lookup_map_)
      for (const auto& m : fleet_.maps)
        if (m.key_type == "bigint" || m.key_type == "int") lookup_map_ = m;
    if (opt_.verbose)
      fmt::print("fleet: {} shard(s), {} map(s), {} fz map(s), workdir {}\n", fleet_.shards.size(), fleet_.maps.size(),
                 fleet_.fz_maps.size(), opt_.workdir.string());
  }

  // -- common pieces for generators ------------------------------------------------------------

  std::string marker(std::uint64_t case_no) const { return std::string(kMarker) + std::to_string(case_no); }

  const std::string& real_shard(Rng& r) const { return r.pick(fleet_.shards); }

  std::string shard_arg(Rng& r, std::uint64_t case_no) {
    if (r.chance(0.7)) return real_shard(r);
    if (r.chance(0.5)) return "nosuch_shard";
    return gen_name(r, case_no, opt_.workdir);
  }

  // Global options sprinkled before or after the command.
  void add_globals(Rng& r, std::vector<std::string>& args) {
    auto insert = [&](std::vector<std::string> opt) {
      std::size_t at = r.chance(0.5) ? 0 : args.size();
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), opt.begin(), opt.end());
    };
    if (r.chance(0.15)) insert({r.pick({"-q", "--quiet"})});
    if (r.chance(0.2)) insert({r.pick({"-v", "--verbose"})});
    if (r.chance(0.1)) insert({r.pick({"-y", "--yes"})});
  }

  std::string format_value(Rng& r) {
    return r.pick({"json", "json", "json", "text", "text", "nagios", "JSON", "", "xml", "json ", "yaml", "tex"});
  }

  // --format before or after the command; odd values too unless valid_only (where an early usage
  // error would hide what the case is about).
  void add_format(Rng& r, std::vector<std::string>& args, double p, bool valid_only = false) {
    if (!r.chance(p)) return;
    std::string v = valid_only ? r.pick({"json", "text"}) : format_value(r);
    bool front = r.chance(0.4);
    std::vector<std::string> opt = r.chance(0.3) ? std::vector<std::string>{"--format=" + v}
                                                  : std::vector<std::string>{"--format", v};
    args.insert(front ? args.begin() : args.end(), opt.begin(), opt.end());
  }

  // -- generators ------------------------------------------------------------------------------

  // A map of this key type to route by (any map when there is none).
  MapInfo pick_map(Rng& r, const std::string& type) {
    if (r.chance(0.08)) return MapInfo{"nosuch_map", "list", "text"};
    std::vector<MapInfo> of_type;
    for (const auto& m : fleet_.maps)
      if (m.key_type == type) of_type.push_back(m);
    return of_type.empty() ? r.pick(fleet_.maps) : r.pick(of_type);
  }

  // Strata (10): the key type (text 4, int, bigint, uuid 2 each) x text or JSON output.
  Case gen_keys(Rng& r, std::uint64_t, std::size_t stratum) {
    Case c;
    static const char* types[] = {"text", "text", "int", "bigint", "uuid"};
    MapInfo m = pick_map(r, types[stratum / 2]);
    std::vector<std::string> args{"lookup", "--map", m.name};
    bool json = stratum % 2 == 0;
    // Text keys accept any bytes: make sure bytes that are not UTF-8 come often.
    bool force_bad_utf8 = m.key_type == "text" && r.chance(0.4);
    if (r.chance(0.4)) {
      // Keys on stdin: lines, CRLF, no final newline, empty lines, NUL bytes.
      std::vector<std::string> keys;
      auto n = r.chance(0.2) ? r.below(3) : 1 + r.below(200);
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string k = r.chance(0.6) ? good_key(r, m.key_type) : key_for(r, m.key_type);
        if (r.chance(0.02)) k.insert(k.begin() + static_cast<std::ptrdiff_t>(r.below(k.size() + 1)), '\0');
        keys.push_back(k);
      }
      if (force_bad_utf8 && !keys.empty()) keys[r.below(keys.size())] = invalid_utf8(r);
      std::string eol = r.chance(0.2) ? "\r\n" : "\n";
      std::string in;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        in += keys[i];
        if (i + 1 < keys.size() || r.chance(0.8)) in += eol;
      }
      if (r.chance(0.05)) in += "\n\n\n";
      c.stdin_data = in;
      args.push_back("-");
    } else {
      auto n = 1 + r.below(r.chance(0.2) ? 30 : 4);
      if (r.chance(0.1)) args.push_back("--");
      auto first = args.size();
      for (std::uint64_t i = 0; i < n; ++i) args.push_back(r.chance(0.3) ? good_key(r, m.key_type) : key_for(r, m.key_type));
      if (force_bad_utf8) args[first + r.below(n)] = invalid_utf8(r);
    }
    if (json) {
      std::vector<std::string> f = r.chance(0.2) ? std::vector<std::string>{"--format=json"}
                                                  : std::vector<std::string>{"--format", "json"};
      args.insert(r.chance(0.5) ? args.begin() : args.begin() + 3, f.begin(), f.end());
    } else {
      add_format(r, args, 0.1);
    }
    add_globals(r, args);
    c.args = std::move(args);
    return c;
  }

  std::string range_text(Rng& r, const std::string& key_type) {
    auto k = [&] { return r.chance(0.6) ? good_key(r, key_type) : key_for(r, key_type); };
    switch (r.below(12)) {
      case 0:
      case 1:
      case 2: {
        std::string a = good_key(r, key_type), b = good_key(r, key_type);
        return a + ".." + b;
      }
      case 3: return k() + "..";
      case 4: return ".." + k();
      case 5: return "..";
      case 6: {
        std::string a = k();
        return a + ".." + a;
      }
      case 7: return k() + r.pick({"...", ".", "-", " .. ", "..."}) + k();
      case 8: return k() + ".." + k() + ".." + k();
      case 9: return k();
      case 10: return "";
      default: return k() + ".." + k();
    }
  }

  // Strata (10): add (6), remove (3), list (1).
  Case gen_ranges(Rng& r, std::uint64_t case_no, std::size_t stratum) {
    Case c;
    bool nosuch = fleet_.fz_maps.empty() || r.chance(0.07);
    MapInfo m = nosuch ? MapInfo{"nosuch_map", r.pick({"list", "range", "hash"}), r.pick({"int", "bigint", "text", "uuid"})}
                       : r.pick(fleet_.fz_maps);
    bool dry = r.chance(0.4), forced_dry = false;
    // The sample fleet's own maps are only ever touched with --dry-run, and that one goes first:
    // after a generated `--` it would be a positional argument, not an option.
    if (!nosuch && r.chance(0.1)) {
      m = r.pick(fleet_.maps);
      dry = forced_dry = true;
    }
    std::string bound_type = m.kind == "hash" ? "bigint" : m.key_type;
    std::vector<std::string> args{"mapping"};
    auto which = stratum;
    auto point_or_range = [&] {
      auto form = r.below(10);
      bool point = m.kind == "list" ? form < 7 : form < 2;  // mostly the right one, sometimes not
      if (form == 9) {  // both (mutually exclusive)
        args.insert(args.end(), {"--point", good_key(r, m.key_type), "--range", range_text(r, bound_type)});
      } else if (form == 8 && r.chance(0.5)) {
        // neither
      } else if (point) {
        args.insert(args.end(), {"--point", r.chance(0.6) ? good_key(r, m.key_type) : key_for(r, m.key_type)});
      } else {
        args.insert(args.end(), {"--range", range_text(r, bound_type)});
      }
    };
    if (which < 6) {
      args.insert(args.end(), {"add", "--map", m.name});
      point_or_range();
      args.insert(args.end(), {"--shard", shard_arg(r, case_no)});
    } else if (which < 9) {
      args.insert(args.end(), {"remove", "--map", m.name});
      point_or_range();
      if (!dry || r.chance(0.5)) args.push_back(r.pick({"--yes", "-y"}));
    } else {
      args.push_back("list");
      if (r.chance(0.8)) args.insert(args.end(), {"--map", m.name});
      dry = dry && r.chance(0.3);
    }
    if (dry) args.insert(forced_dry || r.chance(0.5) ? args.begin() : args.end(), "--dry-run");
    add_format(r, args, 0.2);
    add_globals(r, args);
    c.args = std::move(args);
    return c;
  }

  // Strata (28): the command x the kind of names: odd bytes (not UTF-8, control characters) or
  // anything (valid, quoted, dotted, long, empty, shell metacharacters, keywords...).
  Case gen_names(Rng& r, std::uint64_t case_no, std::size_t stratum) {
    Case c;
    bool bytes = stratum % 2 == 1;
    stratum /= 2;
    auto name = [&] { return bytes ? byte_name(r) : gen_name(r, case_no, opt_.workdir); };
    // Destructive commands only ever name generated things: gen_name never yields a sample-fleet
    // name or an fz_ map (its valid names start with g/G).
    auto any_map = [&] { return r.chance(0.6) && !fleet_.fz_maps.empty() ? r.pick(fleet_.fz_maps).name : name(); };
    bool dry = r.chance(0.4);
    std::vector<std::string> args;
    switch (stratum) {
      case 0:
        args = {"shard", "add", name(), "--dsn", r.pick({"dbname=fz host=/nonexistent/fz", "dbname=g", "host=h"})};
        if (r.chance(0.3)) args.insert(args.end(), {"--status", r.pick({"online", "readonly", "offline", "bogus", ""})});
        break;
      case 1: args = {"shard", "show", r.chance(0.2) ? real_shard(r) : name()}; break;
      case 2: args = {"shard", "set", name(), "--status", r.pick({"online", "readonly", "offline", "ONLINE", ""})}; break;
      case 3:
        args = {"shard", "remove", name(), "--yes"};
        if (r.chance(0.3)) args.push_back("--force");
        break;
      case 4:
        args = {"map", "create", name(), "--kind", r.pick({"list", "range", "hash", "tree", ""}), "--key-type",
                r.pick({"int", "bigint", "text", "uuid", "float", ""})};
        if (r.chance(0.3)) args.insert(args.end(), {"--shards", real_shard(r), "--shards", shard_arg(r, case_no)});
        break;
      case 5:
      case 6: args = {"map", "show", r.chance(0.15) ? r.pick(fleet_.maps).name : name()}; break;
      case 7:
        args = {"map", "drop", name(), "--yes"};
        if (r.chance(0.3)) args.push_back("--force");
        break;
      case 8:
        args = {"table", "add-sharded", name(), "--map", any_map(), "--key", r.chance(0.5) ? "customer_id" : name()};
        break;
      case 9: args = {"table", "add-reference", name()}; break;
      case 10:
        args = {"table", "remove", name(), "--yes"};
        if (r.chance(0.3)) args.push_back("--force");
        break;
      case 11: {
        auto tc = [&] {
          switch (r.below(4)) {
            case 0: return name() + "(" + name() + ")";
            case 1: return name() + "(" + name() + ", " + name() + ")";
            case 2: return name();
            default: return std::string(r.pick({"orders(customer_id, order_id)", "order_lines(customer_id, order_id)",
                                                "orders(", "orders()", "(a)", "orders(a,,b)", "orders(a))"}));
          }
        };
        args = {"xref", "add", name(), "--child", tc(), "--parent", tc(), "--route", name(), "--map", any_map()};
        break;
      }
      case 12: args = {"xref", "remove", name(), "--yes"}; break;
      default: args = {r.pick({"shard", "map", "table", "xref", "mapping"}), "list"}; break;
    }
    if (dry) args.insert(r.chance(0.5) ? args.begin() : args.end(), "--dry-run");
    add_format(r, args, 0.2);
    add_globals(r, args);
    c.args = std::move(args);
    return c;
  }

  // DSNs, many carrying the case's secret marker as a password.
  static constexpr std::size_t kSecretForms = 24;
  std::string dsn_with_secret(Rng& r, const std::string& pw, std::optional<std::size_t> form = std::nullopt) {
    std::string enc_tail;  // the marker with its number percent-encoded (the prefix stays visible)
    for (char ch : pw.substr(kMarker.size())) enc_tail += fmt::format("%{:02X}", static_cast<unsigned char>(ch));
    std::string host = r.pick({"h", "db.invalid", "localhost", "/nonexistent/sock"});
    switch (form.value_or(r.below(kSecretForms))) {
      case 0: return "host=" + host + " dbname=d password=" + pw;
      case 1: return "host=" + host + " dbname=d password='" + pw + "'";
      case 2: return "dbname='host=h user=postgres password=" + pw + "'";
      case 3: return "dbname='postgresql://u:" + pw + "@h/db'";
      case 4: return "dbname=postgresql://u:" + pw + "@h/db";
      case 5: return "postgresql://u:" + pw + "@h/db";
      case 6: return "postgres://u:" + pw + "@h:5432/db?sslmode=disable";
      case 7: return "postgresql://u@h/db?password=" + pw;
      case 8: return "postgresql://u@h/db?sslmode=require&password=" + pw + "&application_name=x";
      case 9: return "host=h dbname=d sslpassword=" + pw;
      case 10: return "postgresql://u@h/db?sslpassword=" + pw;
      case 11: return "postgresql://@:" + pw + "@h2@h:-1/";
      case 12: return "postgresql://u:" + std::string(kMarker) + enc_tail + "@h/db";
      case 13: return "postgresql://u:" + percent_encode_all(pw) + "@h/db";
      case 14: return "postgresql://u@h/db?password=" + std::string(kMarker) + enc_tail;
      case 15: return "host=h password='" + pw;                        // unterminated quote
      case 16: return "host=h port=abc password=" + pw;                // bad port
      case 17: return "host=h password=" + pw + " bogus_keyword=1";    // unknown keyword
      case 18: return "host=h PASSWORD=" + pw;                         // wrong case keyword
      case 19: return "host=h password = " + pw + " dbname=d";         // spaces around =
      case 20: return "host=h password=a password=" + pw;              // duplicate keyword
      case 21: return "postgresql://u:" + pw + "@[::1/db";             // bad IPv6
      case 22: return "postgresql://u:" + pw + "@h:99999999/db?bogus=1";
      default: return "host=h dbname='x\\' y' password=" + pw;       // escaped quote before it
    }
  }

  std::string dsn_plain(Rng& r) {
    switch (r.below(12)) {
      case 0: return "dbname=fz host=/nonexistent/fz";
      case 1: return "host=h port=-1 dbname=x";
      case 2: return "host=h port=70000";
      case 3: return "dbname='unterminated";
      case 4: return "postgresql://";
      case 5: return "postgresql://h:/";
      case 6: return "postgresql://[::1]:5432/db?connect_timeout=1";
      case 7: return "bogus_keyword=1";
      case 8: return "service=nosuch";
      case 9: return "host=" + huge(r);
      case 10: return garbage(r);
      default: return "dbname=" + word(r) + invalid_utf8(r);
    }
  }

  // The real catalog with a password added, so the command connects and really runs.
  std::string catalog_with_secret(Rng& r, const std::string& pw) {
    const auto& kv = fleet_.catalog_kv;
    if (!kv.empty() && kv.count("host") && kv.count("dbname") && r.chance(0.5)) {
      std::string host = kv.at("host");
      std::string enc_host;
      for (unsigned char ch : host)
        enc_host += std::isalnum(ch) ? std::string(1, static_cast<char>(ch)) : fmt::format("%{:02X}", ch);
      std::string port = kv.count("port") ? ":" + kv.at("port") : "";
      std::string user = kv.count("user") ? kv.at("user") : "postgres";
      if (r.chance(0.5)) return "postgresql://" + user + ":" + pw + "@" + enc_host + port + "/" + kv.at("dbname");
      return "postgresql://" + user + "@" + enc_host + port + "/" + kv.at("dbname") + "?password=" + pw;
    }
    if (r.chance(0.5)) return fleet_.catalog + " password=" + pw;
    return fleet_.catalog + " password='" + pw + "'";
  }

  // Strata (32): the DSN: 24 forms carrying the secret, 4 malformed or plain ones, 4 of the real
  // catalog with the secret added. Then how it is used: shard add (with or without --dry-run),
  // the catalog for a command (--catalog before or after it, or $SHARDCTL_CATALOG), or a config
  // file's catalog.
  Case gen_dsns(Rng& r, std::uint64_t case_no, std::size_t stratum) {
    Case c;
    std::string pw = marker(case_no);
    std::vector<std::string> args;
    std::string dsn = stratum < kSecretForms       ? dsn_with_secret(r, pw, stratum)
                      : stratum < kSecretForms + 4 ? dsn_plain(r)
                                                   : catalog_with_secret(r, pw);
    bool real_catalog = stratum >= kSecretForms + 4;
    auto kind = r.below(10);
    if (real_catalog && kind < 3) kind += 6;  // mostly connect with it
    if (kind < 6) {
      args = {"shard", "add", "gdsn" + std::to_string(case_no), "--dsn", dsn};
      if (r.chance(0.5)) args.insert(r.chance(0.5) ? args.begin() : args.end(), "--dry-run");
    } else if (kind < 9) {
      if (r.chance(0.2)) {
        c.env.emplace_back("SHARDCTL_CATALOG", dsn);
        args = {"shard", "list"};
      } else {
        args = {"--catalog", dsn, "shard", "list"};
        if (r.chance(0.3)) std::rotate(args.begin(), args.begin() + 2, args.end());  // after the command
      }
      if (r.chance(0.3)) *std::find(args.begin(), args.end(), "shard") = "map";
    } else {
      // A config file whose catalog carries the secret.
      std::string toml = "catalog = \"" + toml_escape(dsn) + "\"\n";
      fs::path f = opt_.workdir / "cfgdir" / "dsn.toml";
      c.files.emplace_back(f, toml);
      args = {"-c", f.string(), r.pick({"shard", "map"}), "list"};
      c.env.emplace_back("SHARDCTL_CATALOG", std::nullopt);
      c.note = "config " + f.string() + ": " + escape_line(toml);
    }
    if (r.chance(0.35)) args.insert(args.begin(), r.pick({"-v", "--verbose"}));
    add_format(r, args, 0.25, true);
    c.args = std::move(args);
    return c;
  }

  static std::string toml_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out;
  }

  // Valid command lines of every family (one family, then one of its lines), later shuffled,
  // duplicated, dropped and decorated. Mutating lines name only generated things (gperm*) or the
  // harness's fz_ maps, or carry --dry-run; split/merge/move only ever name a map and a shard
  // that do not exist, so no permutation of them moves data.
  std::vector<std::string> template_line(Rng& r, std::uint64_t case_no, std::size_t family) {
    auto m = [&] { return r.pick(fleet_.maps).name; };
    auto fz = [&] { return fleet_.fz_maps.empty() ? std::string("nosuch_map") : r.pick(fleet_.fz_maps).name; };
    std::string g = "gperm" + std::to_string(case_no);
    std::vector<std::vector<std::string>> t;
    // The sandbox family reads paths the operator gives: it weighs five families.
    switch (family) {
      case 0:
        t = {{"shard", "list"},
             {"shard", "show", real_shard(r)},
             {"shard", "add", g, "--dsn", "dbname=fz host=/nonexistent/fz", "--dry-run"},
             {"shard", "set", g, "--status", "readonly", "--dry-run"}};
        break;
      case 1:
        t = {{"map", "list"},
             {"map", "show", m()},
             {"map", "create", g, "--kind", "range", "--key-type", "int", "--dry-run"},
             {"map", "drop", g, "--yes", "--dry-run"}};
        break;
      case 2:
        t = {{"mapping", "list", "--map", m()},
             {"mapping", "add", "--map", fz(), "--range", "7..9", "--shard", real_shard(r), "--dry-run"},
             {"mapping", "remove", "--map", fz(), "--point", "7", "--dry-run"}};
        break;
      case 3: t = {{"table", "list"}, {"table", "add-reference", g, "--dry-run"}}; break;
      case 4: t = {{"xref", "list"}, {"xref", "remove", g, "--dry-run"}}; break;
      case 5: t = {{"lookup", "--map", m(), "5", "17", "900"}, {"lookup", "--map", m(), "-"}}; break;
      case 6:
        t = {{"op", "list"},
             {"op", "show", uuid_valid(r)},
             {"op", "wait", uuid_valid(r), "--timeout", "1"},
             {"op", "cancel", r.pick({"nosuch", "00000000-0000-0000-0000-000000000000"})},
             {"op", "resume", r.pick({"nosuch", "00000000-0000-0000-0000-000000000000"})}};
        break;
      case 7:
        t = {{"check", "--map-consistency"}, {"check", "--orphans", "--format", "nagios"},
             {"check", "--strays", "--fix", "report", "--sample", "3"}};
        break;
      case 8: t = {{"split", "--map", "nosuch_map", "--at", "5", "--to", "nosuch_shard", "--batch-size", "10"}}; break;
      case 9: t = {{"merge", "--map", "nosuch_map", "--range", "1..5", "--into", "nosuch_shard"}}; break;
      case 10: t = {{"move", "--map", "nosuch_map", "--key", "5", "--to", "nosuch_shard"}}; break;
      case 11:
      case 12:
      case 13:
        t = {{"sandbox", "env", "--dir", odd_dir(r)},
             {"sandbox", "status", "--dir", odd_dir(r)},
             {"sandbox", r.pick({"env", "status"})}};
        break;
      case 17:  // the empty path, the classic odd value
      case 18: t = {{"sandbox", family == 17 ? "env" : "status", "--dir", ""}}; break;
      case 14: t = {{"init", "--dry-run"}}; break;
      case 15: t = {{"help", r.pick({"shard", "nosuch", "lookup"})}, {"--version"}, {}}; break;
      default:
        t = {{r.pick({"shard", "map", "mapping", "lookup", "table", "xref", "op", "check", "split", "sandbox"}), "--help"}};
        break;
    }
    return r.pick(t);
  }

  // An odd value for an option: empty, blank, dashes, bytes that are not UTF-8, huge.
  std::string odd_value(Rng& r) {
    switch (r.below(6)) {
      case 0:
      case 1: return "";
      case 2: return r.pick({" ", "-", "--", "-1", "0", "99999999999999999999", "=", ".."});
      default: return garbage(r);
    }
  }

  std::string odd_dir(Rng& r) {
    switch (r.below(8)) {
      case 0:
      case 6:
      case 7: return "";
      case 1: return r.pick({"/", ".", "..", "/nonexistent/x", "a/../b", "/dev/null", "/proc/self", "-", "--", "~"});
      case 2: return "dir\nwith newline";
      case 3: return "d" + invalid_utf8(r);
      case 4: return "/tmp/" + std::string(300 + r.below(5000), 'd');
      default: return (opt_.workdir / "sb" / word(r)).string();
    }
  }

  // Strata (19): the family of the line (sandbox 5, two of them with --dir '').
  Case gen_argv(Rng& r, std::uint64_t case_no, std::size_t stratum) {
    Case c;
    auto args = template_line(r, case_no, stratum);
    // Two modes: one option's value made odd (a --dir through odd_dir) on an otherwise valid
    // line, or permutations (which may also make a value odd).
    bool odd_mode = r.chance(0.4);
    if (odd_mode || r.chance(0.2)) {
      std::vector<std::size_t> at;
      for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i].rfind("--", 0) == 0 && !args[i + 1].empty() && args[i + 1].rfind("-", 0) != 0 &&
            args[i] != "--dry-run" && args[i] != "--yes")
          at.push_back(i + 1);
      if (!at.empty()) {
        auto i = r.pick(at);
        args[i] = args[i - 1] == "--dir" ? odd_dir(r) : odd_value(r);
      }
    }
    const std::vector<std::string> inject = {"--bogus", "-Z", "--map=", "--map", "--format", "--catalog", "-c", "--",
                                              "-", "--dry-run", "--yes", "-q", "-v", "-qv", "--quiet", "--verbose",
                                              "--help-spec", "--config=", "--catalog=host=h", "-cx", "---", "--=x"};
    auto rounds = odd_mode ? 0 : 1 + r.below(3);
    for (std::uint64_t i = 0; i < rounds; ++i) {
      switch (r.below(7)) {
        case 0: r.shuffle(args); break;
        case 1:
          if (!args.empty()) {
            auto at = r.below(args.size());
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), args[at]);
          }
          break;
        case 2:
          if (!args.empty()) args.erase(args.begin() + static_cast<std::ptrdiff_t>(r.below(args.size())));
          break;
        case 3:
          if (args.size() > 1) {
            auto a = r.below(args.size()), b = r.below(args.size());
            std::swap(args[a], args[b]);
          }
          break;
        case 4:
          args.insert(args.begin() + static_cast<std::ptrdiff_t>(r.below(args.size() + 1)), r.pick(inject));
          break;
        case 5: {
          // A global option with a value, before or after the command.
          std::vector<std::string> opt;
          switch (r.below(4)) {
            case 0: opt = {"--format", format_value(r)}; break;
            case 1: opt = {"--catalog", r.pick({"host=h dbname=x", "host=/nonexistent dbname=x", "", "postgresql://"})}; break;
            case 2: opt = {"-c", r.pick({"/nonexistent.toml", "", (opt_.workdir / "dir.toml").string()})}; break;
            default: opt = {"--config=" + (opt_.workdir / "nonexistent.toml").string()}; break;
          }
          auto at = r.chance(0.5) ? 0 : args.size();
          args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), opt.begin(), opt.end());
          break;
        }
        default: args.push_back(r.pick({"extra", "--", "-", ""})); break;
      }
    }
    add_format(r, args, 0.15);
    // Drops can remove a --dry-run: that is safe, as the only mutating lines name generated things
    // (gperm*) or the harness's fz_ maps.
    if (r.chance(0.15)) {
      switch (r.below(4)) {
        case 0: c.env.emplace_back("SHARDCTL_CATALOG", std::nullopt); break;
        case 1: c.env.emplace_back("SHARDCTL_CONFIG", (opt_.workdir / "nonexistent.toml").string()); break;
        case 2: c.env.emplace_back("SHARDCTL_CONFIG", ""); break;
        default: c.env.emplace_back("SHARDCTL_SANDBOX_DIR", odd_dir(r)); break;
      }
    }
    c.args = std::move(args);
    return c;
  }

  // -- TOML ------------------------------------------------------------------------------------

  std::string base_toml(Rng& r, std::uint64_t case_no) {
    std::string catalog = r.chance(0.15) ? catalog_with_secret(r, marker(case_no)) : fleet_.catalog;
    std::string t = "# shardctl config\ncatalog = \"" + toml_escape(catalog) + "\"\n\n[defaults]\nbatch_size = 100\n";
    if (r.chance(0.5)) t += "parallel = 2\n";
    if (r.chance(0.4)) t += "fence_grace = \"30m\"\n";
    if (r.chance(0.4)) t += "\n[check]\nsample = 5\nwarning = [\"strays\"]\n";
    t += "\n[[archive.job]]\nname = \"old-orders\"\ntable = \"public.orders\"\n"
         "where = \"created_at < now() - interval '400 days'\"\ncascade = true\n"
         "to = \"dir:/var/lib/shardctl/archive\"   # or \"postgres:host=arch dbname=archive\"\n";
    if (r.chance(0.3))
      t += "\n[[archive.job]]\nname = \"two\"\ntable = \"orders\"\nwhere = \"true\"\nto = \"postgres:host=arch dbname=archive\"\n";
    return t;
  }

  static constexpr std::size_t kTomlMutations = 16;
  // One to three mutations; the first one's kind is given.
  std::string mutate_toml(Rng& r, std::string t, std::size_t first_kind) {
    auto lines_of = [](const std::string& s) {
      std::vector<std::string> v;
      std::string cur;
      for (char ch : s) {
        if (ch == '\n') {
          v.push_back(cur);
          cur.clear();
        } else {
          cur += ch;
        }
      }
      if (!cur.empty()) v.push_back(cur);
      return v;
    };
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& l : v) s += l + "\n";
      return s;
    };
    auto rounds = 1 + r.below(3);
    for (std::uint64_t i = 0; i < rounds; ++i) {
      auto lines = lines_of(t);
      switch (i == 0 ? first_kind : r.below(kTomlMutations)) {
        case 0:  // byte flips
          for (auto n = 1 + r.below(4); n-- > 0 && !t.empty();) t[r.below(t.size())] ^= static_cast<char>(1u << r.below(8));
          break;
        case 1:  // truncation
          t.resize(r.below(t.size() + 1));
          break;
        case 2:  // duplicate a line (duplicate keys / tables)
          if (!lines.empty()) {
            auto at = r.below(lines.size());
            lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
            t = join(lines);
          }
          break;
        case 3:  // wrong types
          t += "\n[defaults]\n";
          t = replace_first(t, "batch_size = 100",
                                      "batch_size = " + r.pick({"\"100\"", "1.5", "true", "[1, 2]", "{ a = 1 }",
                                                                "1979-05-27T07:32:00Z", "'x'", "nan", "inf"}));
          break;
        case 4:  // unknown keys and tables
          t += r.pick({"batch_sise = 10\n", "\n[defaultz]\nx = 1\n", "catalog2 = \"x\"\n", "\n[archive.job.extra]\nq = 1\n",
                       "\n[[archive.job]]\nname = \"x\"\n", "\n[check]\nwarning = [\"no_such_kind\"]\n",
                       "\n[check]\nwarning = [\"strays\"]\ncritical = [\"strays\"]\n", "\"quoted key\" = 1\n",
                       "a.b.c = 1\n"});
          break;
        case 5:  // huge and edge values
          t = replace_first(
              t, "batch_size = 100",
              "batch_size = " + r.pick({"99999999999999999999", "9223372036854775807", "-9223372036854775808", "-1",
                                        "0", "0x7fffffffffffffff", "1_000", "+5", "0o777", "0b1"}));
          if (r.chance(0.3)) t += "\n[check]\nsample = " + r.pick({"-1", "999999999999", "0"}) + "\n";
          break;
        case 6:  // invalid UTF-8 in a string, a key, a comment
          t.insert(r.below(t.size() + 1), invalid_utf8(r));
          break;
        case 7:  // deep nesting
        {
          auto depth = r.chance(0.5) ? 100 + r.below(200) : 1000 + r.below(20000);
          std::string s = r.chance(0.5) ? "deep = " + std::string(depth, '[') + std::string(depth, ']') + "\n"
                                        : "deep = " + repeat("{ a = ", depth) + "1" + std::string(depth, '}') + "\n";
          t = r.chance(0.5) ? s + t : t + s;
          break;
        }
        case 8:  // very long line
          t += "# " + std::string(100000 + r.below(1000000), 'x') + "\n";
          if (r.chance(0.5)) t += "catalog = \"" + std::string(200000, 'y') + "\"\n";
          break;
        case 9:  // CRLF, BOM, tabs
          t = r.chance(0.5) ? replace_all(t, "\n", "\r\n") : "\xef\xbb\xbf" + t;
          break;
        case 10:  // random bytes inserted (NUL included: files may hold it)
          t.insert(r.below(t.size() + 1), random_bytes(r, 1 + r.below(20)) + (r.chance(0.3) ? std::string(1, '\0') : ""));
          break;
        case 11:  // strings: unterminated, multi-line, escapes
          t += r.pick({"x = \"unterminated\n", "x = '''\nmulti\n", "x = \"\\u0000\"\n", "x = \"\\uD800\"\n",
                       "x = \"\\U0010FFFF\"\n", "x = \"\\q\"\n", "x = \"\"\"\n", "catalog = \"\\u0000\"\n"});
          break;
        case 12:  // delete a line
          if (!lines.empty()) {
            lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(r.below(lines.size())));
            t = join(lines);
          }
          break;
        case 13:  // shuffle lines
          r.shuffle(lines);
          t = join(lines);
          break;
        case 14:  // fence_grace values
          t += "\n[defaults]\nfence_grace = \"" + r.pick({"0m", "-5m", "999999999999d", "5x", "", "m", "1.5h", "30 m"}) +
               "\"\n";
          break;
        default:  // empty or comments only
          t = r.pick({"", "# nothing\n", "\n\n", "[defaults]\n", "catalog = \"\"\n", "[[archive.job]]\n"});
          break;
      }
    }
    return t;
  }

  static std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
  }

  // Strata (26): the first mutation's kind (16), or one of 10 odd files to read.
  Case gen_toml(Rng& r, std::uint64_t case_no, std::size_t stratum) {
    Case c;
    std::vector<std::string> cmd;
    switch (r.below(8)) {
      case 0: cmd = {"map", "list"}; break;
      case 1: cmd = {"check", "--map-consistency"}; break;
      case 2: cmd = {"split", "--map", "nosuch_map", "--at", "5", "--to", "nosuch_shard"}; break;
      case 3: cmd = {"sandbox", "status", "--dir", (opt_.workdir / "sb" / "none").string()}; break;
      default: cmd = {"shard", "list"}; break;
    }
    std::string path;
    if (stratum >= kTomlMutations) {
      // Odd things to read as a config. (A FIFO: the files generator.)
      const std::vector<std::string> odd = {"/dev/zero", "/dev/null", "/dev/urandom", "", "/", "/nonexistent/x.toml",
                                            "/proc/self/mem", (opt_.workdir / "dir.toml").string(),
                                            (opt_.workdir / "loop.toml").string(), (opt_.workdir / "missing.toml").string()};
      path = odd[stratum - kTomlMutations];
      c.note = "config: " + shell_quote(path);
    } else {
      std::string t = base_toml(r, case_no);
      if (r.chance(0.9)) t = mutate_toml(r, t, stratum);
      fs::path f;
      auto where = r.below(10);
      if (where == 0) f = opt_.workdir / "cwdcfg" / "shardctl.toml";
      else if (where == 1) f = opt_.workdir / "xdgcfg" / "shardctl" / "config.toml";
      else f = opt_.workdir / "cfgdir" / "fuzz.toml";
      c.files.emplace_back(f, t);
      path = f.string();
      std::string shown = t.size() > 600 ? t.substr(0, 600) + fmt::format("...[{} bytes]", t.size()) : t;
      c.note = "config " + path + " (" + std::to_string(t.size()) + " bytes): " + escape_line(shown);
      if (where == 0) {  // ./shardctl.toml
        c.cwd = opt_.workdir / "cwdcfg";
        c.args = cmd;
        c.env.emplace_back("SHARDCTL_CATALOG", std::nullopt);
        return c;
      }
      if (where == 1) {  // $XDG_CONFIG_HOME/shardctl/config.toml
        c.env.emplace_back("XDG_CONFIG_HOME", (opt_.workdir / "xdgcfg").string());
        c.env.emplace_back("SHARDCTL_CATALOG", std::nullopt);
        c.args = cmd;
        return c;
      }
      if (r.chance(0.5)) c.env.emplace_back("SHARDCTL_CATALOG", std::nullopt);
    }
    switch (r.below(4)) {
      case 0: c.env.emplace_back("SHARDCTL_CONFIG", path); c.args = cmd; break;
      case 1: c.args = {"--config=" + path}; c.args.insert(c.args.end(), cmd.begin(), cmd.end()); break;
      case 2: c.args = cmd; c.args.insert(c.args.end(), {"-c", path}); break;
      default: c.args = {"-c", path}; c.args.insert(c.args.end(), cmd.begin(), cmd.end()); break;
    }
    return c;
  }

  // Hostile files: config, plan and manifest text nested far deeper
  // than any real one (toml++ and nlohmann-json recursed to a SIGSEGV), numbers no double holds,
  // and where a file is read, things that are not regular files: a FIFO (opening one to read
  // blocks until a writer comes), /dev/zero (never ends), a directory.
  // Strata (15): the file and what is wrong with it.
  static constexpr std::size_t kFileStrata = 15;

  static std::string nested_json(Rng& r, std::size_t depth) {
    bool objects = r.chance(0.5);
    std::string open = objects ? "{\"a\": " : "[", close = objects ? "}" : "]";
    return repeat(open, depth) + (r.chance(0.5) ? "1" : "") + (r.chance(0.8) ? repeat(close, depth) : "");
  }

  static std::size_t hostile_depth(Rng& r) {
    switch (r.below(3)) {
      case 0: return 60 + r.below(10);  // around the limit (64)
      case 1: return 1000 + r.below(10000);
      default: return 100000 + r.below(900000);
    }
  }

  // An odd thing in place of a file at `p`; returns what it is, for the note.
  std::string odd_file(Rng& r, Case& c, const fs::path& p) {
    switch (r.below(4)) {
      case 0: c.odd_files.emplace_back(p, "fifo"); return "a FIFO";
      case 1: c.odd_files.emplace_back(p, "dir"); return "a directory";
      case 2: c.odd_files.emplace_back(p, "->/dev/zero"); return "a link to /dev/zero";
      default: c.odd_files.emplace_back(p, "->" + r.pick({std::string("/dev/urandom"), std::string("/dev/null")})); return "a link to a device";
    }
  }

  Case gen_files(Rng& r, std::uint64_t, std::size_t stratum) {
    Case c;
    fs::path dir = opt_.workdir / "files";
    fs::path config = dir / "hostile.toml", plan = dir / "plan.json", load = dir / "load.csv";
    auto shown = [](const std::string& t) {
      return t.size() > 300 ? t.substr(0, 150) + fmt::format("...[{} bytes]...", t.size()) + t.substr(t.size() - 100) : t;
    };
    auto with_config = [&](const std::string& text) {
      c.files.emplace_back(config, "catalog = \"" + fleet_.catalog + "\"\n" + text);
      c.args = {"-c", config.string(), r.pick({std::string("shard"), std::string("map")}), "list"};
      c.note = "config: " + escape_line(shown(text));
    };
    auto with_plan = [&](const std::string& text) {
      c.files.emplace_back(plan, text);
      c.args = {"rebalance", "apply", plan.string()};
      if (r.chance(0.7)) c.args.push_back("--dry-run");
      c.note = "plan: " + escape_line(shown(text));
    };
    const std::string envelope =
        "\"format\": \"shardctl-rebalance-plan\", \"format_version\": 1, \"maps\": [], \"stats\": {\"snapshot_id\": 1, "
        "\"fingerprint\": \"x\", \"taken_at\": \"2026-01-01T00:00:00Z\"}, \"fingerprint\": \"y\"";
    fs::path manifest = archive_dir_ / "manifest.json";
    auto restore = [&] {
      c.args = {"archive", "restore", archive_run_.empty() ? std::string("00000000-0000-0000-0000-000000000000") : archive_run_};
      if (r.chance(0.5)) c.args.push_back("--dry-run");
    };
    switch (stratum) {
      case 0: {  // a dotted key of many parts
        auto n = hostile_depth(r);
        std::string key = "a";
        for (std::size_t i = 1; i < n; ++i) key += r.chance(0.9) ? ".a" : " . \"q\"";
        with_config(key + " = 1\n");
        break;
      }
      case 1: {  // [a.a...] or [[a.a...]]
        auto n = hostile_depth(r);
        bool array = r.chance(0.3);
        with_config(std::string(array ? "[[" : "[") + "a" + repeat(".a", n - 1) + (array ? "]]" : "]") + "\nx = 1\n");
        break;
      }
      case 2: {  // arrays and inline tables within each other
        auto n = hostile_depth(r);
        with_config("x = " + (r.chance(0.5) ? repeat("[", n) + repeat("]", n) : repeat("{ a = ", n) + "1" + repeat("}", n)) + "\n");
        break;
      }
      case 3:  // the config is not a regular file (a FIFO: never opened to wait)
        c.note = "config: " + odd_file(r, c, config);
        c.args = {"-c", config.string(), "shard", "list"};
        break;
      case 4:  // a plan with one extra key nested deep
        with_plan("{\"extra\": " + nested_json(r, hostile_depth(r)) + ", " + envelope + "}");
        break;
      case 5:  // a plan that is nothing but nesting
        with_plan(nested_json(r, hostile_depth(r)));
        break;
      case 6: {  // numbers no double holds (and tiny ones, which are fine)
        auto number = r.pick({std::string("1e400"), std::string("-1e999"), std::string(400, '9'), std::string("1e-400"),
                              std::string("18446744073709551616"), std::string("-9223372036854775809"), std::string("0.1e99999")});
        with_plan("{" + envelope + ", \"plan\": {\"imbalance_before\": " + number + ", \"steps\": [{\"rows\": " + number + "}]}}");
        break;
      }
      case 7:
      case 8:
      case 9:  // the plan file is not a regular file
        c.note = "plan: " + odd_file(r, c, plan);
        c.args = {"rebalance", "apply", plan.string(), "--dry-run"};
        break;
      case 10: {  // the manifest's "files" nested deep
        c.files.emplace_back(manifest, "{\"format\": \"shardctl-archive/1\", \"files\": " + nested_json(r, hostile_depth(r)) + "}");
        c.note = "manifest: files nested deep";
        restore();
        break;
      }
      case 11:  // the manifest is not a regular file
        c.note = "manifest: " + odd_file(r, c, manifest);
        restore();
        break;
      case 12: {  // the manifest's counts out of range or of the wrong type
        auto doc = archive_manifest_.is_object() ? archive_manifest_ : nlohmann::json::object();
        auto table = doc.contains("ddl") && doc["ddl"].is_object() && !doc["ddl"].empty() ? doc["ddl"].begin().key() : "public.t";
        auto number = r.pick({std::string("1e400"), std::string("-1"), std::string("1.5"), std::string("\"7\""),
                              std::string("18446744073709551616"), std::string("true")});
        std::string text = doc.dump();
        text.pop_back();  // the closing brace
        text += ", \"files\": [{\"path\": \"x.zst\", \"shard\": \"s\", \"table\": \"" + table + "\", \"batch\": " + number +
                ", \"rows\": " + number + ", \"raw_bytes\": 1, \"bytes\": 1, \"sha256\": \"" + std::string(64, 'a') + "\"}]}";
        // (a second "files" key: the parser keeps the last)
        c.files.emplace_back(manifest, text);
        c.note = "manifest: counts " + number;
        restore();
        break;
      }
      case 13: {  // a file the manifest lists is not a regular file
        auto doc = archive_manifest_.is_object() ? archive_manifest_ : nlohmann::json::object();
        auto shard = fleet_.shards.empty() ? std::string("s") : fleet_.shards.front();
        auto table = doc.contains("ddl") && doc["ddl"].is_object() && !doc["ddl"].empty() ? doc["ddl"].begin().key() : "public.t";
        if (doc.contains("files") && doc["files"].is_array() && !doc["files"].empty() && doc["files"][0].is_object()) {
          shard = doc["files"][0].value("shard", shard);  // a batch the run wrote: its shard and table
          table = doc["files"][0].value("table", table);
        }
        doc["files"] = nlohmann::json::array({{{"path", "fz_batch.zst"}, {"shard", shard}, {"table", table}, {"batch", 1},
                                               {"rows", 1}, {"raw_bytes", 1}, {"bytes", 1}, {"sha256", std::string(64, 'a')},
                                               {"restored", false}}});
        c.files.emplace_back(manifest, doc.dump());
        c.note = "archive file: " + odd_file(r, c, archive_dir_ / "fz_batch.zst");
        restore();
        break;
      }
      default: {  // the load file is not a regular file
        c.note = "load file: " + odd_file(r, c, load);
        std::string map = lookup_map_ ? lookup_map_->name : r.pick(fleet_.maps).name;
        c.args = {"stats", "collect", "--map", map, "--load-file", load.string()};
        break;
      }
    }
    if (archive_run_.empty() && stratum >= 10 && stratum <= 13) {
      // No run to restore: the files still go where a run's would, and restore names no run.
      c.files.clear();
      c.odd_files.clear();
    }
    return c;
  }

  // Big outputs into a reader that goes away after the first line: `| head -1`.
  // Strata (4): keys as arguments or on stdin x text or JSON.
  Case gen_pipes(Rng& r, std::uint64_t, std::size_t stratum) {
    Case c;
    c.close_stdout_early = true;
    std::string map = lookup_map_ ? lookup_map_->name : r.pick(fleet_.maps).name;
    std::vector<std::string> args{"lookup", "--map", map};
    bool json = stratum % 2 == 1;
    if (json) args.insert(args.begin(), {"--format", "json"});
    if (stratum < 2) {
      for (int i = 1; i <= 20000; ++i) args.push_back(std::to_string(i));
      c.note = "keys: the arguments 1..20000";
    } else {
      // Text streams; JSON reads every line first (300000 keys take 15 s in the ASan build, more
      // than a case's timeout, so JSON gets 30000: still megabytes of output).
      int n = json ? 30000 : 300000;
      std::string in;
      in.reserve(static_cast<std::size_t>(n) * 7);
      for (int i = 1; i <= n; ++i) in += std::to_string(i % 5000) + "\n";
      c.stdin_data = std::move(in);
      args.push_back("-");
      c.note = fmt::format("stdin: {} keys, i % 5000 for i in 1..{}", n, n);
    }
    c.args = std::move(args);
    return c;
  }

  void register_generators() {
    auto add = [&](std::string name, int weight, std::size_t strata, Generator g) {
      if (!opt_.only_gens.empty() && !opt_.only_gens.count(name)) return;
      gens_.push_back({std::move(name), weight, strata, std::move(g)});
    };
    add("keys", 20, 10, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_keys(r, n, s); });
    add("ranges", 14, 10, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_ranges(r, n, s); });
    add("names", 18, 28, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_names(r, n, s); });
    add("dsns", 16, kSecretForms + 8, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_dsns(r, n, s); });
    add("argv", 16, 19, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_argv(r, n, s); });
    add("toml", 12, kTomlMutations + 10, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_toml(r, n, s); });
    add("pipes", 3, 4, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_pipes(r, n, s); });
    add("files", 12, kFileStrata, [this](Rng& r, std::uint64_t n, std::size_t s) { return gen_files(r, n, s); });
    if (gens_.empty()) throw std::runtime_error("no generator selected");
    for (const auto& g : gens_) total_weight_ += g.weight;
  }

  // The generator of case `case_no`: the first draw of the case's own stream.
  std::size_t gen_of(Rng& r) {
    auto x = static_cast<int>(r.below(static_cast<std::uint64_t>(total_weight_)));
    for (std::size_t i = 0; i < gens_.size(); ++i) {
      if (x < gens_[i].weight) return i;
      x -= gens_[i].weight;
    }
    throw std::logic_error("unreachable");
  }

  // How many cases before `case_no` used generator `g` (counted once, forward; a replay of an
  // earlier case counts again from 0).
  std::uint64_t ordinal(std::uint64_t case_no, std::size_t g) {
    if (case_no < counted_upto_) {
      counted_upto_ = 0;
      counts_.assign(gens_.size(), 0);
    }
    counts_.resize(gens_.size(), 0);
    for (; counted_upto_ < case_no; ++counted_upto_) {
      Rng r(opt_.seed, counted_upto_);
      ++counts_[gen_of(r)];
    }
    return counts_[g];
  }

  Case make_case(std::uint64_t case_no) {
    Rng r(opt_.seed, case_no);
    std::size_t g = gen_of(r);
    auto& gen = gens_[g];
    // The k-th case of this generator takes stratum perm[k % strata] of a permutation shuffled
    // per round of `strata` cases.
    std::uint64_t k = ordinal(case_no, g);
    std::vector<std::size_t> perm(gen.strata);
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::uint64_t name_hash = 1469598103934665603ULL;  // FNV-1a: the same everywhere
    for (unsigned char ch : gen.name) name_hash = (name_hash ^ ch) * 1099511628211ULL;
    Rng deal(opt_.seed ^ name_hash, k / gen.strata);
    deal.shuffle(perm);
    Case c = gen.fn(r, case_no, perm[k % gen.strata]);
    c.gen = gen.name;
    return c;
  }

  // -- judging ---------------------------------------------------------------------------------

  // The family the dispatcher runs (its own rule: the first argument that is not an option or
  // an option's value).
  static std::string family_of(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& a = args[i];
      if (a == "-c" || a == "--config" || a == "--catalog" || a == "--format") {
        ++i;
        continue;
      }
      if (!a.empty() && a[0] == '-') continue;
      return a;
    }
    return "";
  }

  static std::optional<std::string> last_format(const std::vector<std::string>& args) {
    std::optional<std::string> f;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--") break;
      if (args[i] == "--format" && i + 1 < args.size()) f = args[i + 1];
      else if (args[i].rfind("--format=", 0) == 0) f = args[i].substr(9);
    }
    return f;
  }

  // Which case planted the marker found in this output (its number follows the prefix).
  static std::string planted_by(const Result& res) {
    std::set<std::string> cases;
    for (const std::string* s : {&res.out, &res.err}) {
      std::size_t pos = 0;
      while ((pos = s->find(kMarker, pos)) != std::string::npos) {
        pos += kMarker.size();
        std::string digits;
        while (pos < s->size() && std::isdigit(static_cast<unsigned char>((*s)[pos]))) digits += (*s)[pos++];
        if (!digits.empty()) cases.insert(digits);
      }
    }
    std::string out;
    for (const auto& c : cases) out += (out.empty() ? "" : ", ") + c;
    return out;
  }

  std::vector<std::string> judge(const Case& c, const Result& res) {
    std::vector<std::string> why;
    if (res.exec_failed) why.push_back("harness could not run the binary (exit " + std::to_string(res.code) + ")");
    if (res.timed_out) why.push_back(fmt::format("hang: no exit after {:.0f} s (process group killed)", opt_.timeout));
    if (res.rss_exceeded)
      why.push_back(fmt::format("runaway memory: resident size passed {} MB (process group killed)", opt_.max_rss_mb));
    if (res.sig) why.push_back(fmt::format("killed by signal {} ({})", res.sig, signal_name(res.sig)));
    for (const auto& n : kSanitizerNeedles)
      if (res.err_hits.count(n)) why.push_back("sanitizer report on stderr: \"" + n + "\"");
    bool leak_out = res.out_hits.count(std::string(kMarker)) || res.out_hits.count(percent_encode_all(kMarker));
    bool leak_err = res.err_hits.count(std::string(kMarker)) || res.err_hits.count(percent_encode_all(kMarker));
    if (leak_out || leak_err) {
      std::string by = planted_by(res);
      why.push_back(std::string("printed the secret password marker on ") + (leak_out && leak_err ? "stdout and stderr" : leak_out ? "stdout" : "stderr") +
                    (by.empty() ? "" : " (planted by case " + by + ")"));
    }
    if (res.exited) {
      std::string fam = family_of(c.args);
      static const std::set<int> common{0, 64, 65, 69, 75};
      bool check = fam == "check";
      if (res.code == 70) why.push_back("exit 70 (internal error)");
      else if (!common.count(res.code) && !(check && res.code >= 1 && res.code <= 3) && !res.exec_failed)
        why.push_back(fmt::format("exit {} is not a documented exit code for `{}` (0, {}64, 65, 69, 75)", res.code,
                                  fam.empty() ? "shardctl" : fam, check ? "1, 2, 3, " : ""));
      if (c.close_stdout_early && res.code != 0 && res.code != 70)
        why.push_back(fmt::format("exit {} when the reader closed the pipe (want 0)", res.code));
      if (opt_.strict_json && (res.code == 0 || (check && res.code <= 3)) && !c.close_stdout_early &&
          last_format(c.args) == "json" && res.out_total == res.out.size()) {
        bool skip = fam == "help" || fam.empty();
        for (const auto& a : c.args) skip = skip || a == "--help" || a == "-h" || a == "--version" || a == "--help-spec";
        if (!skip && !nlohmann::json::accept(res.out)) why.push_back("--format json, but stdout is not one JSON document");
      }
    }
    std::error_code ec;
    if (fs::exists(opt_.workdir / "pwned", ec)) {
      why.push_back("a generated name ran as a shell command (" + (opt_.workdir / "pwned").string() + " exists)");
      fs::remove(opt_.workdir / "pwned", ec);
    }
    return why;
  }

  std::string describe(std::uint64_t case_no, const Case& c, const Result& res, const std::vector<std::string>& why) {
    std::string s = fmt::format("FAIL case {} [{}] seed {}: ", case_no, c.gen, opt_.seed);
    for (std::size_t i = 0; i < why.size(); ++i) s += (i ? "; " : "") + why[i];
    s += "\n  argv:   " + show_argv(c.args);
    for (const auto& [k, v] : c.env) s += "\n  env:    " + (v ? k + "=" + shell_quote(*v) : "unset " + k);
    if (!c.cwd.empty()) s += "\n  cwd:    " + c.cwd.string();
    if (c.stdin_data) {
      const auto& in = *c.stdin_data;
      auto lines = std::count(in.begin(), in.end(), '\n');
      s += fmt::format("\n  stdin:  {} bytes, {} lines", in.size(), lines);
      for (const auto& l : first_lines(in, 3)) s += "\n          | " + escape_line(l);
    } else {
      s += "\n  stdin:  /dev/null";
    }
    if (c.close_stdout_early) s += "\n  stdout: a pipe the reader closed after the first line";
    if (!c.note.empty()) s += "\n  note:   " + c.note;
    if (res.exited) s += fmt::format("\n  exit:   {}", res.code);
    else if (res.sig) s += fmt::format("\n  exit:   signal {} ({})", res.sig, signal_name(res.sig));
    else s += "\n  exit:   none, killed by the harness";
    s += fmt::format(" after {:.0f} ms", res.ms);
    auto lines = first_lines(res.err, 8);
    if (lines.empty()) s += "\n  stderr: (empty)";
    for (std::size_t i = 0; i < lines.size(); ++i) s += (i ? "\n          " : "\n  stderr: ") + escape_line(lines[i]);
    auto out_lines = first_lines(res.out, 3);
    for (std::size_t i = 0; i < out_lines.size(); ++i)
      s += (i ? "\n          " : "\n  stdout: ") + escape_line(out_lines[i]);
    if (c.gen == "audit")
      s += fmt::format("\n  again:  {} --cases {}   (the cases before this audit)\n", replay(), case_no + 1);
    else
      s += fmt::format("\n  again:  {} --case {} --verbose   (state-dependent: --cases {})\n", replay(), case_no,
                       case_no + 1);
    return s;
  }

  // Every shard in the catalog, in both formats: no secret may have been stored. A secret the
  // catalog holds is charged to the case that planted it (its number follows the marker), and
  // the shard is removed so later cases are judged on their own.
  void audit(std::uint64_t after_case) {
    for (bool json : {true, false}) {
      std::vector<std::string> args{"shard", "list"};
      if (json) args.insert(args.end(), {"--format", "json"});
      auto res = run_fixed(args);
      Case c;
      c.gen = "audit";
      c.args = args;
      auto why = judge(c, res);
      bool parsed = res.exited && res.code == 0 && nlohmann::json::accept(res.out);
      if (json && res.exited && res.code == 0 && !parsed) why.push_back("shard list --format json is not one JSON document");
      if (json && parsed) {
        bool all_charged = true;
        auto doc = nlohmann::json::parse(res.out);
        for (const auto& s : doc["shards"]) {
          std::string dump = s.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
          if (dump.find(kMarker) == std::string::npos && dump.find(percent_encode_all(kMarker)) == std::string::npos)
            continue;
          auto name = s.value("name", std::string("?"));
          auto dsn = s.value("dsn", std::string("?"));
          Result stored;
          stored.out = dump;
          std::string by = planted_by(stored);
          if (by.empty() || by.find(',') != std::string::npos) all_charged = false;
          else charge_stored_secret(std::stoull(by), after_case, name, dsn);
          run_fixed({"shard", "remove", name, "--force", "--yes"});
        }
        // The leaks are charged to their cases: the audit itself fails only for other reasons.
        if (all_charged)
          why.erase(std::remove_if(why.begin(), why.end(),
                                   [](const std::string& w) { return w.rfind("printed the secret", 0) == 0; }),
                    why.end());
      }
      if (why.empty()) continue;
      std::string key = why[0] + "|" + (res.err.empty() ? "" : first_lines(res.err, 1)[0]) + (json ? "j" : "t");
      if (!audit_seen_.insert(key).second) continue;
      auto text = describe(after_case, c, res, why);
      text.replace(0, 4, "FAIL audit after");
      record({after_case, "audit", why[0], text});
    }
  }

  // The command that replays cases of this run: the same seed, generators (the choice of
  // generator depends on --only) and workdir (its fleet.json holds the lists cases choose from).
  std::string replay() const {
    std::string out = fmt::format("{} --bin {} --seed {}", self_, shell_quote(opt_.bin.string()), opt_.seed);
    for (const auto& g : opt_.only_gens) out += (g == *opt_.only_gens.begin() ? " --only " : ",") + g;
    return out + " --workdir " + shell_quote(opt_.workdir.string());
  }

  void charge_stored_secret(std::uint64_t planted, std::uint64_t after_case, const std::string& name,
                            const std::string& dsn) {
    Case c = make_case(planted);
    std::string why = "the catalog stored the secret password marker (shard list after case " +
                      std::to_string(after_case) + " shows shard " + shell_quote(name) + " with dsn " + escape_line(dsn) +
                      ")";
    std::string s = fmt::format("FAIL case {} [{}] seed {}: {}", planted, c.gen, opt_.seed, why);
    s += "\n  argv:   " + show_argv(c.args);
    for (const auto& [k, v] : c.env) s += "\n  env:    " + (v ? k + "=" + shell_quote(*v) : "unset " + k);
    s += fmt::format("\n  again:  {} --case {} --verbose\n", replay(), planted);
    ++stats_[c.gen].failed;
    record({planted, c.gen, "the catalog stored the secret password marker", s});
  }

  void record(Failure f) {
    std::cout << f.text << std::flush;
    failures_.push_back(std::move(f));
  }

  int run_all() {
    auto& stats = stats_;
    auto start = Clock::now();
    std::vector<std::uint64_t> todo = opt_.only_cases;
    std::uint64_t limit = opt_.cases.value_or(opt_.seconds ? UINT64_MAX : 200);
    std::uint64_t ran = 0;
    for (std::uint64_t i = 0;; ++i) {
      std::uint64_t case_no;
      if (!todo.empty()) {
        if (i >= todo.size()) break;
        case_no = todo[i];
      } else {
        if (i >= limit) break;
        if (opt_.seconds && std::chrono::duration<double>(Clock::now() - start).count() >= *opt_.seconds) break;
        case_no = i;
      }
      last_case_ = case_no;
      Case c = make_case(case_no);
      if (opt_.list_only) {
        fmt::print("case {} [{}]: {}\n", case_no, c.gen, show_argv(c.args, opt_.verbose && c.args.size() < 50));
        for (const auto& [k, v] : c.env) fmt::print("  env: {}\n", v ? k + "=" + shell_quote(*v) : "unset " + k);
        if (!c.note.empty()) fmt::print("  note: {}\n", c.note.substr(0, 300));
        continue;
      }
      if (opt_.verbose && !todo.empty())
        fmt::print("case {} [{}]: {}\n", case_no, c.gen, show_argv(c.args, c.args.size() < 50));
      Result res = runner_->run(c, cwd_, stdin_file_);
      ++ran;
      auto why = judge(c, res);
      auto& st = stats[c.gen];
      ++st.cases;
      st.ms += res.ms;
      st.max_ms = std::max(st.max_ms, res.ms);
      if (opt_.verbose)
        fmt::print("case {} [{}] exit {} {:.0f} ms: {}\n", case_no, c.gen,
                   res.exited ? std::to_string(res.code) : res.sig ? std::string(signal_name(res.sig)) : "killed", res.ms,
                   show_argv(c.args));
      if (!why.empty()) {
        ++st.failed;
        record({case_no, c.gen, why[0], describe(case_no, c, res, why)});
      }
      if (opt_.audit_every && ran % opt_.audit_every == 0) audit(case_no);
    }
    if (opt_.list_only) return 0;
    audit(last_case_);
    double secs = std::chrono::duration<double>(Clock::now() - start).count();

    fmt::print("\nshardctl-cli-fuzz: seed {}, {} case(s) in {:.1f} s, {} failure(s)\n", opt_.seed, ran, secs,
               failures_.size());
    fmt::print("  {:<8} {:>6} {:>8} {:>9} {:>9}\n", "GEN", "CASES", "FAILED", "AVG ms", "MAX ms");
    for (const auto& [name, st] : stats)
      fmt::print("  {:<8} {:>6} {:>8} {:>9.0f} {:>9.0f}\n", name, st.cases, st.failed, st.cases ? st.ms / st.cases : 0.0,
                 st.max_ms);
    if (!failures_.empty()) {
      fmt::print("failures:\n");
      for (const auto& f : failures_)
        fmt::print("  {} {} [{}]: {}\n", f.gen == "audit" ? "audit after case" : "case", f.case_no, f.gen, f.reasons);
    }
    return failures_.empty() ? 0 : 1;
  }

 public:
  std::string self_ = "shardctl-cli-fuzz";

 private:
  struct Gen {
    std::string name;
    int weight;
    std::size_t strata;
    Generator fn;
  };
  int total_weight_ = 0;
  std::uint64_t counted_upto_ = 0;
  std::vector<std::uint64_t> counts_;
  Options opt_;
  Fleet fleet_;
  std::optional<MapInfo> lookup_map_;
  std::string archive_run_;             // the setup's archive run (empty: none)
  fs::path archive_dir_;                // its directory
  nlohmann::json archive_manifest_;     // its manifest as written
  std::optional<Runner> runner_;
  fs::path cwd_, stdin_file_;
  std::vector<Gen> gens_;
  std::vector<Failure> failures_;
  std::set<std::string> audit_seen_;
  struct Stat {
    std::uint64_t cases = 0, failed = 0;
    double ms = 0, max_ms = 0;
  };
  std::map<std::string, Stat> stats_;
  std::uint64_t last_case_ = 0;
};

}  // namespace

int usage(const char* self) {
  std::cerr << "usage: " << self
            << " --bin DIR [--seed N] [--cases N | --seconds S] [--case N]... [--only GEN,...]\n"
               "       [--timeout S] [--workdir DIR] [--catalog DSN] [--audit-every N] [--max-rss-mb MB]\n"
               "       [--no-setup] [--strict-json] [--list] [--verbose]\n"
               "generators: keys ranges names dsns argv toml pipes. See tests/fuzz/README.md.\n";
  return 2;
}

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--bin") o.bin = value();
      else if (a == "--seed") o.seed = std::stoull(value());
      else if (a == "--cases") o.cases = std::stoull(value());
      else if (a == "--seconds") o.seconds = std::stod(value());
      else if (a == "--case") o.only_cases.push_back(std::stoull(value()));
      else if (a == "--only") {
        std::stringstream ss(value());
        for (std::string g; std::getline(ss, g, ',');) o.only_gens.insert(g);
      } else if (a == "--timeout") o.timeout = std::stod(value());
      else if (a == "--workdir") o.workdir = value();
      else if (a == "--catalog") o.catalog = value();
      else if (a == "--audit-every") o.audit_every = std::stoul(value());
      else if (a == "--max-rss-mb") o.max_rss_mb = std::stol(value());
      else if (a == "--no-setup") o.setup = false;
      else if (a == "--strict-json") o.strict_json = true;
      else if (a == "--list") o.list_only = true;
      else if (a == "--verbose" || a == "-v") o.verbose = true;
      else if (a == "--help" || a == "-h") return usage(argv[0]) - 2;
      else throw std::invalid_argument("unknown option " + a);
    }
    if (o.bin.empty()) throw std::invalid_argument("--bin is required");
  } catch (const std::exception& e) {
    std::cerr << "shardctl-cli-fuzz: " << e.what() << '\n';
    return usage(argv[0]);
  }
  try {
    Harness h(std::move(o));
    h.self_ = argv[0];
    return h.main();
  } catch (const std::exception& e) {
    std::cerr << "shardctl-cli-fuzz: error: " << e.what() << '\n';
    return 2;
  }
}
