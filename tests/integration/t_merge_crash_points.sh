# Kill every step boundary of a merge from two source shards (one batch each); see
# crash_points.inc.
CRASH_ARGS=(merge --map customers --range 200..700 --into shard_1 --batch-size 400)
CRASH_SHARDS=3
CRASH_MAPPING="..700>shard_1 700..>shard_3"
CRASH_STRIDE=1
CRASH_PARITY=0
source "$(dirname "$0")/crash_points.inc"
