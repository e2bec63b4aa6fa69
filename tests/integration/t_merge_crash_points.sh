# A merge from two source shards (one batch each) killed at every step boundary and resumed,
# in chains, plus isolated kills; see crash_points.inc for what it proves.
CRASH_ARGS=(merge --map customers --range 200..700 --into shard_1 --batch-size 400)
CRASH_SHARDS=3
CRASH_MAPPING="..700>shard_1 700..>shard_3"
source "$(dirname "$0")/crash_points.inc"
