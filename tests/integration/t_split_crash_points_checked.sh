# The checked path (FK triggers not skipped on load and purge: SHARDCTL_CHECKED_LOAD=1,
# lib/migrate/load_path.hpp) of the split t_split_crash_points.sh runs on the fast path, killed
# at every step boundary and resumed, in chains, plus isolated kills; see crash_points.inc.
export SHARDCTL_CHECKED_LOAD=1
CRASH_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..150>shard_1 150..501>shard_2 501..>shard_2"
source "$(dirname "$0")/crash_points.inc"
