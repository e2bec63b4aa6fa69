// Writing the Prometheus textfile atomically: node_exporter must never read half a file, so
// the text goes to FILE.tmp.PID first and is renamed over FILE.
#pragma once

#include <string>

namespace shardctl::check {

// Throws a usage Error naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace shardctl::check
