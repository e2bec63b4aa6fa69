// The SQL of the objects shardctl creates on shards, one constant per file of lib/shardside/sql,
// embedded byte for byte at build time (cmake/embed_sql.cmake). Each file says what it creates
// and when it runs; only lib/shardside runs them.
#pragma once

#include <string_view>

namespace shardctl::shardside::sql {

extern const std::string_view guard;              // schema shardctl, guard_ranges, the guard functions
extern const std::string_view archive_receipts;   // shardctl.archive_receipts
extern const std::string_view schema_history;     // shardctl.schema_history, current shape
extern const std::string_view schema_history_2;   // step: first shape -> second
extern const std::string_view quarantine;         // schema shardctl_quarantine and its manifest
extern const std::string_view stream_keys;        // shardctl.stream_watch, stream_keys, record_stream_key()

}  // namespace shardctl::shardside::sql
