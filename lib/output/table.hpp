// Aligned text tables for --format text.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace shardctl::output {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);
  bool empty() const noexcept { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace shardctl::output
