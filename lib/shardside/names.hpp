// The names of what shardctl creates on shards: every folder that names one of these objects
// (to create it, read it, leave it out of a comparison or a finding) takes the name from here.
// What a new feature creates on shards (online moves' publications, slots, subscriptions) is
// named here too, with its SQL in sql/ and its readers beside guard.hpp, so that it can be
// listed and cleaned up the same way.
#pragma once

#include <string_view>

namespace shardctl::shardside {

// shardctl's own schemas on a shard: the guard, receipts and history tables, and the rows
// `check --fix` quarantines (lib/check/cascade.hpp).
inline constexpr const char* schema = "shardctl";
inline constexpr const char* quarantine_schema = "shardctl_quarantine";
inline constexpr const char* own_schemas[] = {schema, quarantine_schema};

// Tables (sql/*.sql create them).
inline constexpr const char* guard_ranges_table = "shardctl.guard_ranges";
inline constexpr const char* archive_receipts_table = "shardctl.archive_receipts";
inline constexpr const char* schema_history_table = "shardctl.schema_history";
inline constexpr const char* stream_watch_table = "shardctl.stream_watch";
inline constexpr const char* stream_keys_table = "shardctl.stream_keys";

// The guard's functions (sql/guard.sql). guard_hit's comment holds the guard's version.
inline constexpr const char* guard_row_function = "shardctl.guard";
inline constexpr const char* guard_rows_function = "shardctl.guard_rows";
inline constexpr const char* guard_truncate_function = "shardctl.guard_truncate";
inline constexpr const char* guard_route_function = "shardctl.guard_route";
inline constexpr const char* guard_hit_signature = "shardctl.guard_hit(bigint, text, text)";

// The guard's triggers on a sharded table (lib/migrate/guard.hpp says which table gets which).
inline constexpr const char* guard_row_trigger = "shardctl_guard";
inline constexpr const char* guard_insert_trigger = "shardctl_guard_insert";
inline constexpr const char* guard_update_trigger = "shardctl_guard_update";
inline constexpr const char* guard_delete_trigger = "shardctl_guard_delete";
inline constexpr const char* guard_truncate_trigger = "shardctl_guard_truncate";
// The light trigger alone, in place of the others, on the tables of a map that has a route
// floor but no range on the shard: it checks a stated version against the floor and nothing
// else (lib/migrate/guard.hpp).
inline constexpr const char* guard_route_trigger = "shardctl_guard_route";
// The trigger that records the keys an online move's stream changes on its target
// (stream_keys.hpp), and its function (sql/stream_keys.sql). The trigger lives on a target's
// moving tables only while a stream of a batch runs to it.
inline constexpr const char* stream_keys_trigger = "shardctl_stream_keys";
inline constexpr const char* stream_keys_function = "shardctl.record_stream_key";
// Every trigger name the guard uses, this version's and earlier ones' (an upgrade replaces a
// plain table's row trigger with the statement triggers, keeping the row trigger's name).
inline constexpr const char* guard_triggers[] = {guard_row_trigger,    guard_insert_trigger,   guard_update_trigger,
                                                 guard_delete_trigger, guard_truncate_trigger, guard_route_trigger};
// Every trigger of shardctl's on a sharded table: the guard's and the stream record's. Schema
// comparisons (drift) leave them out.
inline constexpr const char* own_triggers[] = {guard_row_trigger,    guard_insert_trigger,   guard_update_trigger, guard_delete_trigger,
                                               guard_truncate_trigger, guard_route_trigger, stream_keys_trigger};
// The statement triggers' transition tables (their names appear in sql/guard.sql too).
inline constexpr const char* guard_old_rows = "shardctl_old";
inline constexpr const char* guard_new_rows = "shardctl_new";

// Route floors (sql/guard.sql): the table, the setting in which a transaction states the map
// versions it routed by, and the function applications call to state one and have it checked.
inline constexpr const char* route_floors_table = "shardctl.route_floors";
inline constexpr const char* route_setting = "shardctl.route";
inline constexpr const char* assert_route_function = "shardctl.assert_route";

// The constraint names of the guard's refusals (SQLSTATE 55000; each is "shardctl_" and the
// state its DETAIL names), and of a malformed route (SQLSTATE 22023). Applications act on them.
inline constexpr std::string_view refusal_states[] = {"moving", "fenced", "stale_route"};
inline constexpr const char* refusal_constraints[] = {"shardctl_moving", "shardctl_fenced", "shardctl_stale_route"};
inline constexpr const char* bad_route_constraint = "shardctl_bad_route";

// The session setting the row trigger's WHEN reads: shardctl's own bulk sessions turn the
// per-row early refusal off (the statement triggers still check).
inline constexpr const char* row_guard_setting = "shardctl.row_guard";
inline constexpr const char* bulk_guard_session = "SET shardctl.row_guard = off";

// Online moves' replication objects: a publication and a logical replication slot on the
// source, a subscription on the target, all three named shardctl_op_<the operation id's 32
// lowercase hex digits>_<batch number> (replication.hpp builds and parses the names). Such a
// name fits PostgreSQL's 63-byte identifiers and is a valid slot name ([a-z0-9_]), so it needs
// no quoting anywhere, and `check` can tell whose operation an object belongs to.
inline constexpr std::string_view replication_name_prefix = "shardctl_op_";
inline constexpr std::size_t replication_name_hex_digits = 32;
inline constexpr std::size_t replication_name_max_batch_digits = 10;  // an int's digits
inline constexpr std::size_t max_identifier_bytes = 63;               // NAMEDATALEN - 1

// Whether `name` has the shape of one of those names (the batch number a decimal without
// leading zeros that fits an int is replication.hpp's to check when it parses it).
constexpr bool is_replication_name_shape(std::string_view name) {
  if (!name.starts_with(replication_name_prefix)) return false;
  std::string_view rest = name.substr(replication_name_prefix.size());
  if (rest.size() < replication_name_hex_digits + 2 || rest[replication_name_hex_digits] != '_') return false;
  for (char c : rest.substr(0, replication_name_hex_digits))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  std::string_view batch = rest.substr(replication_name_hex_digits + 1);
  if (batch.size() > replication_name_max_batch_digits || (batch.size() > 1 && batch[0] == '0')) return false;
  for (char c : batch)
    if (c < '0' || c > '9') return false;
  return true;
}

// Whether `name` is one of the guard's trigger names.
constexpr bool is_guard_trigger(std::string_view name) {
  for (std::string_view t : guard_triggers)
    if (name == t) return true;
  return false;
}

// Whether `name` is one of shardctl's own schemas on a shard.
constexpr bool is_own_schema(std::string_view name) {
  for (std::string_view s : own_schemas)
    if (name == s) return true;
  return false;
}

}  // namespace shardctl::shardside
