// The one error type of shardctl. Every failure that reaches an operator is an
// Error whose kind decides the process exit code (shardctl(1), EXIT STATUS); exit_code_for() is
// the only place that mapping lives.
#pragma once

#include <stdexcept>
#include <string>

namespace shardctl {

enum class ErrorKind {
  usage,        // 64: bad flag, bad key, bad range, unknown map/shard/table
  data,         // 65: malformed config / plan / migration file
  unavailable,  // 69: a database needed is unreachable
  internal,     // 70: a bug
  locked,       // 75: another operation holds the lock
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string hint = {})
      : std::runtime_error(std::move(message)), kind_(kind), hint_(std::move(hint)) {}

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  ErrorKind kind_;
  std::string hint_;
};

// A server that turned a connection away because every slot it has was taken (SQLSTATE 53300:
// "too many clients", "remaining connection slots are reserved"), still after the retries the
// connect timeout allows (pg/connect_retry.hpp). Its kind is unavailable, so exit codes treat it
// as an unreachable database (69; 3 for the commands that report shards); reports name it
// refused, not unreachable (shardctl(1), CONNECTIONS).
class TooManyConnections : public Error {
 public:
  TooManyConnections(std::string message, std::string hint) : Error(ErrorKind::unavailable, std::move(message), std::move(hint)) {}
};

// Whether `e` is such a refusal.
inline bool refused_for_connections(const Error& e) noexcept { return dynamic_cast<const TooManyConnections*>(&e) != nullptr; }

// Shorthands so call sites read as what went wrong.
inline Error usage_error(std::string msg, std::string hint = {}) {
  return Error(ErrorKind::usage, std::move(msg), std::move(hint));
}
inline Error data_error(std::string msg, std::string hint = {}) {
  return Error(ErrorKind::data, std::move(msg), std::move(hint));
}
inline Error unavailable_error(std::string msg, std::string hint = {}) {
  return Error(ErrorKind::unavailable, std::move(msg), std::move(hint));
}
inline Error internal_error(std::string msg, std::string hint = {}) {
  return Error(ErrorKind::internal, std::move(msg), std::move(hint));
}
inline Error locked_error(std::string msg, std::string hint = {}) {
  return Error(ErrorKind::locked, std::move(msg), std::move(hint));
}

namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int check_warning = 1;
inline constexpr int check_critical = 2;
inline constexpr int check_unknown = 3;
inline constexpr int usage = 64;
inline constexpr int data = 65;
inline constexpr int unavailable = 69;
inline constexpr int internal = 70;
inline constexpr int locked = 75;
}  // namespace exit_code

constexpr int exit_code_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::usage: return exit_code::usage;
    case ErrorKind::data: return exit_code::data;
    case ErrorKind::unavailable: return exit_code::unavailable;
    case ErrorKind::internal: return exit_code::internal;
    case ErrorKind::locked: return exit_code::locked;
  }
  return exit_code::internal;
}

}  // namespace shardctl
