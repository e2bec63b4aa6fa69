# The checked path (FK triggers not skipped: SHARDCTL_CHECKED_LOAD=1), killed at a fifth of the
# step boundaries of a multi-batch split; the other crash-point tests run the fast path at every
# boundary. See crash_points.inc.
export SHARDCTL_CHECKED_LOAD=1
CRASH_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..150>shard_1 150..501>shard_2 501..>shard_2"
CRASH_STRIDE=5
CRASH_PARITY=2
source "$(dirname "$0")/crash_points.inc"
