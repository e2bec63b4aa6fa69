// shardctl split: move the upper (or lower) part of a mapping to another shard, batch by batch.
#include "cli/family.hpp"
#include "run_operation.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("split", "Split a mapping and move one side to another shard");
  migrate::SplitRequest req;
  std::string move = "upper";
  fam.app().add_option("--map", req.map, "Map to split")->required()->type_name("MAP");
  fam.app().add_option("--at", req.at, "Split point: the first key of the upper part")->required()->type_name("KEY");
  fam.app().add_option("--to", req.to, "Shard that receives the moving part")->required()->type_name("SHARD");
  fam.app().add_option("--move", move, "Which side moves")->check(cli::IsMember({"upper", "lower"}))->type_name("upper|lower");
  return apps::migration_main(fam, argc, argv, req, [&](migrate::Engine& engine, migrate::SplitRequest& r) {
    r.move_upper = move == "upper";  // --move, read by now
    return engine.plan_split(r);
  });
}
