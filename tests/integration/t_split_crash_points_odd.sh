# Kill points 1, 3, 5, ... of a multi-batch split; see crash_points.inc.
CRASH_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..150>shard_1 150..501>shard_2 501..>shard_2"
CRASH_STRIDE=2
CRASH_PARITY=1
source "$(dirname "$0")/crash_points.inc"
