#include "shardio/copy_parts.hpp"

#include "shardio/copy_ahead.hpp"

#include <memory>

namespace shardctl::shardio {

namespace {

// The binary COPY header (signature, flags 0, no extension) and trailer (field count -1).
constexpr std::string_view binary_header{"PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0", 19};
constexpr std::string_view binary_trailer{"\377\377", 2};

}  // namespace

std::uint64_t pump_copy_in_parts(RawConn& from, const std::string& copy_out_sql, RawConn& to, const std::string& copy_in_sql,
                                 const std::function<void(std::string_view)>& observe, const CopyParts& parts) {
  std::unique_ptr<CopyIn> part;  // the target's COPY of the current part
  bool first = true;
  std::uint64_t in_part = 0, limit = 0;
  // Read ahead (copy_ahead.hpp): the source streams on while the target ends a part and reads it
  // back.
  std::uint64_t bytes = copy_out_ahead(from, copy_out_sql, [&](std::string_view chunk) {
    observe(chunk);
    if (!part) {
      part = std::make_unique<CopyIn>(to, copy_in_sql);
      if (!first) part->put(binary_header);  // the source's header went to the first part
      first = false;
      in_part = 0;
      limit = parts.part_bytes();
    }
    part->put(chunk);
    in_part += chunk.size();
    if (in_part >= limit && parts.at_row_end()) {
      part->put(binary_trailer);
      part->end();
      part.reset();
      parts.between();
    }
  });
  if (part) {
    part->end();  // the source's trailer ended it
  } else if (first) {
    throw internal_error("a COPY stream ended before its header");
  }
  return bytes;
}

}  // namespace shardctl::shardio
