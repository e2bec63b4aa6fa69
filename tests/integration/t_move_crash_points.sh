# A move of a whole mapping (customers 501.., on shard_2, three batches) killed at every step
# boundary and resumed, in chains, plus isolated kills; see crash_points.inc for what it proves.
CRASH_ARGS=(move --map customers --key 700 --to shard_1 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..501>shard_1 501..>shard_1"
source "$(dirname "$0")/crash_points.inc"
