// A COPY TO STDOUT read on a thread of its own, ahead of whoever consumes it.
//
// Why: a migration's load stops taking the source's rows between the parts of its load
// (copy_parts.hpp): it ends a COPY on the target, waits for it, and reads the part back. Read
// inline, the source's COPY stalled all that time (its socket's buffer fills within a
// millisecond), and the copy cost the source's read plus those pauses. Read ahead, the source
// keeps streaming into memory while the target is busy, up to a bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

// Runs `copy_out_sql` on `from` on a second thread and hands its bytes to `sink` on this one,
// in blocks of whole CopyData messages (whole rows of a binary COPY, the header with the first),
// holding at most about `max_ahead_bytes` not yet consumed. `from` must not be used by anyone
// else until this returns. An error on either side stops both: the reader drains the COPY so
// `from` stays usable (as copy_out_to does), and the first error is rethrown here.
// Returns the bytes read.
std::uint64_t copy_out_ahead(RawConn& from, const std::string& copy_out_sql,
                             const std::function<void(std::string_view)>& sink,
                             std::size_t max_ahead_bytes = std::size_t{32} << 20);

}  // namespace shardctl::shardio
