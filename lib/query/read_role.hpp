// The role `shardctl query` runs as must be one that can only read. A read-only transaction
// stops writes to tables, not what a privileged role does from inside a SELECT: COPY TO
// PROGRAM, server files, replication slots, signals to other sessions, and `set_config('role',
// ...)` back to any role the login is a member of. So the login role itself, and every role it
// is a member of (directly or through others, inherited or not), is checked before anything
// runs; `--allow-privileged` skips the refusal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::query {

// One role the login is a member of (the login itself among them).
struct MemberRole {
  std::string name;
  bool superuser = false;
  bool replication = false;
};

// The predefined roles whose membership lets a statement act beyond reading the database.
inline constexpr std::string_view privileged_roles[] = {
    "pg_execute_server_program",  // COPY ... TO/FROM PROGRAM: a shell command on the server
    "pg_write_server_files",      // COPY ... TO 'file', lo_export: files written on the server
    "pg_read_server_files",       // pg_read_file, COPY FROM 'file': any file the server can read
    "pg_signal_backend",          // pg_cancel_backend, pg_terminate_backend of other roles' sessions
};

// Rows (name, superuser, replication, login) of every role the session's login is a member
// of, itself included. Qualified with pg_catalog throughout: the login's own search_path must not
// choose what is checked.
inline constexpr const char* member_roles_sql =
    "SELECT r.rolname, r.rolsuper, r.rolreplication, SESSION_USER FROM pg_catalog.pg_roles r "
    "WHERE pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER') ORDER BY 1";

// Why `login` may do more than read, its own attributes first ("superuser", "REPLICATION",
// "member of pg_signal_backend", ...), joined with ", "; nullopt when it can only read.
std::optional<std::string> privilege_refusal(const std::string& login, const std::vector<MemberRole>& roles);

// How to set up the read role, for the refusal's hint.
std::string read_role_hint();

// `dsn` (key=value text) connecting as `user` instead of its own user: libpq keeps the last
// value of a repeated keyword.
std::string dsn_with_user(const std::string& dsn, const std::string& user);

}  // namespace shardctl::query
