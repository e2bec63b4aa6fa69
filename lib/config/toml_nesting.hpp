// How deep a TOML text nests, measured before toml++ sees it: toml++ 3.3 recursed to its death
// (SIGSEGV) on a key of 40,000 dotted parts. Every dotted key part and table header part is a
// level, and so is every array and inline table; shardctl.toml needs 4 at most (a key of an
// [[archive.job]]).
#pragma once

#include <cstddef>
#include <string_view>

namespace shardctl::config {

// The offset of the first key part, header or bracket of `text` that puts a value more than
// `max_depth` levels below the root table, or npos. Malformed text is toml++'s to report: this
// only counts, and never counts inside strings or comments.
std::size_t toml_too_deep_at(std::string_view text, int max_depth);

}  // namespace shardctl::config
