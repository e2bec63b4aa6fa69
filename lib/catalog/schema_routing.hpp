// The catalog's routing contract for applications (catalog version 12; man/shardctl-routing.7):
// shards.app_dsn, one map version per committed change with a notice, the change log, and the
// functions shardctl.route, shardctl.map_snapshot and shardctl.map_changes.
#pragma once

#include <array>
#include <string_view>

namespace shardctl::catalog {

std::string_view routing_contract_sql() noexcept;

// The functions a routing role may execute (`shardctl init --grant-routing ROLE`), as their
// regprocedure signatures; nothing else of schema shardctl is granted.
inline constexpr std::array<std::string_view, 5> routing_functions = {
    "shardctl.route(text, text)", "shardctl.route(text, bigint)", "shardctl.route(text, uuid)",
    "shardctl.map_snapshot(text)", "shardctl.map_changes(text, bigint)"};

// The channel shardctl.map_changed() notifies on at commit; the payload is 'MAP:VERSION'.
inline constexpr std::string_view map_change_channel = "shardctl_map_changed";

}  // namespace shardctl::catalog
