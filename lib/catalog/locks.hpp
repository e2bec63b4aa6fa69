// Advisory lock keys shardctl uses on the catalog: (class, id) pairs in the two-int4 form so
// they cannot collide with an application's single-bigint advisory locks.
#pragma once

namespace shardctl::catalog {

inline constexpr int lock_class = 0x53484344;  // "SHCD"
inline constexpr int lock_init = 1;

}  // namespace shardctl::catalog
