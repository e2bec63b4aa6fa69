// The SQLSTATE codes shardctl tells apart (PostgreSQL's errcodes, "PostgreSQL Error Codes" in its
// manual), named once: every place that types a server error by its code reads them from here.
#pragma once

#include <string_view>

namespace shardctl::pg::sqlstate {

inline constexpr std::string_view serialization_failure = "40001";
inline constexpr std::string_view deadlock_detected = "40P01";
// shardctl's write guard (lib/shardside/sql/guard.sql) refuses writes to moving or moved keys with it.
inline constexpr std::string_view object_not_in_prerequisite_state = "55000";
inline constexpr std::string_view lock_not_available = "55P03";  // lock_timeout, NOWAIT
inline constexpr std::string_view foreign_key_violation = "23503";
inline constexpr std::string_view insufficient_privilege = "42501";
inline constexpr std::string_view syntax_error = "42601";
inline constexpr std::string_view indeterminate_datatype = "42P18";  // a $1 whose type nothing gives
inline constexpr std::string_view query_canceled = "57014";          // statement_timeout, or a cancel
inline constexpr std::string_view feature_not_supported = "0A000";

// The session is gone: class 08 (connection exception) or 57P (the server shut down or
// restarted, the database was dropped, the session timed out).
constexpr bool connection_lost(std::string_view state) noexcept {
  return state.substr(0, 2) == "08" || state.substr(0, 3) == "57P";
}

}  // namespace shardctl::pg::sqlstate
