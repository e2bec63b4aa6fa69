// TEMPORARY (branch query-drift): only the drift command, to test apps/schema_drift.hpp before
// the schema family's real binary (apply, status, baseline) is merged; the lead takes that one.
#include "schema_drift.hpp"

int main(int argc, char** argv) {
  shardctl::cli::Family fam("schema", "Roll schema changes out to every shard, show their state, find drift");
  add_drift_command(fam);
  return fam.main(argc, argv);
}
