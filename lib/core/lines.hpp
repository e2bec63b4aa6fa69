// Text that arrives in chunks (a COPY stream) read as whole lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace shardctl {

// Hands `line` every line that ends in `chunk`, its '\n' included. The start of a line cut
// between chunks waits in `partial` until its end arrives (empty again once it is whole), so
// each line is seen once and whole, whatever the chunks' sizes; what is left in `partial` after
// the last chunk is a line the stream never ended.
template <class Line>
void for_each_line(std::string_view chunk, std::string& partial, Line&& line) {
  std::size_t start = 0;
  for (std::size_t nl; (nl = chunk.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    if (partial.empty()) {
      line(chunk.substr(start, nl + 1 - start));
    } else {
      partial.append(chunk.substr(start, nl + 1 - start));
      line(std::string_view(partial));
      partial.clear();
    }
  }
  partial.append(chunk.substr(start));
}

}  // namespace shardctl
