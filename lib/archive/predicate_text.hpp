// The first look at an archive predicate, without a server: the text must read as one
// expression that stays inside the parentheses it is given. PostgreSQL's lexical rules decide
// where a string, quoted identifier or dollar-quoted text begins and ends; outside them a
// ';', a comment, or a ')' that closes a parenthesis the text did not open is refused, and so
// are a NUL byte (libpq would cut the statement there), bytes that are not UTF-8 and a byte
// order mark. The server then parses what passes (predicate.hpp); this screen makes sure the
// text cannot reach beyond the expression it is parsed as, and says where it goes wrong.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace shardctl::archive {

struct PredicateFlaw {
  std::string what;            // "a ';' ends the statement"
  std::size_t character = 0;   // 1-based, in characters (as PostgreSQL counts error positions)
};

// Assumes standard_conforming_strings = on (the archive sessions set it: predicate.hpp).
std::optional<PredicateFlaw> screen_predicate(std::string_view text);

// How many UTF-8 characters the first `bytes` bytes of `text` hold (for positions).
std::size_t characters_in(std::string_view text, std::size_t bytes);

}  // namespace shardctl::archive
