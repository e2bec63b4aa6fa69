#include "query/read_role.hpp"

#include "core/utf8.hpp"

namespace shardctl::query {
namespace {

std::string quoted(const std::string& role) { return "\"" + printable(role) + "\""; }

bool is_privileged_predefined(const std::string& name) {
  for (auto p : privileged_roles)
    if (p == name) return true;
  return false;
}

}  // namespace

std::optional<std::string> privilege_refusal(const std::string& login, const std::vector<MemberRole>& roles) {
  // A superuser counts as a member of every role: its own attribute says all there is to say.
  for (const auto& r : roles)
    if (r.name == login && r.superuser) return "superuser";
  std::string why;
  auto add = [&](const std::string& reason) { why += (why.empty() ? "" : ", ") + reason; };
  for (const auto& r : roles)
    if (r.name == login && r.replication) add("REPLICATION");
  for (const auto& r : roles) {
    if (r.name == login) continue;
    if (r.superuser) add("member of superuser " + quoted(r.name));
    if (r.replication) add("member of " + quoted(r.name) + ", which has REPLICATION");
    if (is_privileged_predefined(r.name)) add("member of " + r.name);
  }
  if (why.empty()) return std::nullopt;
  return why;
}

std::string read_role_hint() {
  return "set [query] user in the config to a login role that can only read, e.g. CREATE ROLE shardctl_read LOGIN; "
         "GRANT pg_read_all_data TO shardctl_read (see shardctl-query(1)); or pass --allow-privileged";
}

std::string dsn_with_user(const std::string& dsn, const std::string& user) {
  std::string quoted_user = "'";
  for (char c : user) {
    if (c == '\'' || c == '\\') quoted_user += '\\';
    quoted_user += c;
  }
  return dsn + " user=" + quoted_user + "'";
}

}  // namespace shardctl::query
