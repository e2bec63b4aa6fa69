// JUnit XML for CI systems (GitLab, Jenkins, GitHub Actions test reporters): one test case per
// shard and migration, so a pipeline shows which shard failed at what (`--junit FILE`).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shardctl::output {

struct JunitCase {
  std::string classname;  // e.g. "shardctl.schema.apply.shard_1"
  std::string name;       // e.g. "V2__add_email.sql"
  double seconds = 0;
  std::optional<std::string> failure;  // message of a failed case
  std::string details;                 // body of the failure element
  bool skipped = false;
};

// The document for one test suite named `suite`.
std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases);

// Writes junit_xml to `path` atomically (temporary file in the same directory, then rename).
// A path that cannot be written is a usage Error (64) naming it.
void write_junit(const std::string& path, const std::string& suite, const std::vector<JunitCase>& cases);

}  // namespace shardctl::output
