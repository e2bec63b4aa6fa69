// UTF-8 checks for names the operator types: PostgreSQL databases here are UTF-8, and an error
// message must not echo bytes a terminal cannot show.
#pragma once

#include <string>

namespace shardctl::catalog {

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(const std::string& s);

// `s` with control characters and bytes that are not UTF-8 written as \xNN.
std::string printable(const std::string& s);

}  // namespace shardctl::catalog
