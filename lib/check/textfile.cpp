#include "check/textfile.hpp"

#include "core/atomic_file.hpp"

namespace shardctl::check {

void write_file_atomically(const std::string& path, const std::string& text) {
  shardctl::write_file_atomically(path, text, "check the --prometheus path and its directory");
}

}  // namespace shardctl::check
