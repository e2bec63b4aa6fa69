// Advisory lock keys shardctl uses on the catalog: (class, id) pairs in the two-int4 form so
// they cannot collide with an application's single-bigint advisory locks.
#pragma once

namespace shardctl::catalog {

inline constexpr int lock_class = 0x53484344;  // "SHCD"
inline constexpr int lock_init = 1;

// The data lock of one map, a session-level advisory lock on the catalog. A split, merge or
// move holds it SHARED for as long as its process runs the operation; `check --fix` holds it
// EXCLUSIVE while it fixes rows of the map. So a fix never runs beside a move of the same map,
// and moves of one map only exclude each other by range (the operations table). Bind $1 to
// lock_class and $2 to the map id (bigint). Both sides use the try_ form and exit 75 (locked).
inline constexpr const char* map_data_lock_shared_sql =
    "SELECT pg_try_advisory_lock_shared($1, hashtext('map-data:' || $2::text))";
inline constexpr const char* map_data_unlock_shared_sql =
    "SELECT pg_advisory_unlock_shared($1, hashtext('map-data:' || $2::text))";
inline constexpr const char* map_data_lock_exclusive_sql =
    "SELECT pg_try_advisory_lock($1, hashtext('map-data:' || $2::text))";
inline constexpr const char* map_data_unlock_exclusive_sql =
    "SELECT pg_advisory_unlock($1, hashtext('map-data:' || $2::text))";

}  // namespace shardctl::catalog
