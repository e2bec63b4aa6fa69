// `archive restore RUN [--where SQL]`: archived rows go back to the shard the map routes each
// row's key to now, which need not be the shard they came from. Per archived batch, every target
// shard stages the rows in temporary tables, checks for conflicts, and inserts parents first; all
// shards are checked before any commits. Rows leave the archive only after the shards commit.
// A restore is idempotent: a row already on its shard with the same contents counts as present,
// so a restore interrupted at any point is finished by running it again. A row whose key the
// shard holds with other contents is a conflict (64) and nothing of that batch changes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "pg/connection.hpp"

namespace shardctl::archive {

struct RestoreReport {
  std::string run;
  std::optional<std::string> where;
  // shard -> table -> rows inserted; rows already there with the same contents.
  std::map<std::string, std::map<std::string, std::int64_t>> restored, present;
  std::int64_t batches = 0;
};

nlohmann::json to_json(const RestoreReport& r);
void print_restore(std::ostream& out, const RestoreReport& r, bool dry_run);

class Restorer {
 public:
  explicit Restorer(pg::Connection& catalog) : catalog_(catalog) {}
  // `dry_run`: stages and checks everything, then rolls back; the archive is not touched.
  RestoreReport restore(const std::string& run, const std::optional<std::string>& where, bool dry_run);

 private:
  pg::Connection& catalog_;
};

}  // namespace shardctl::archive
