# An online move of a whole mapping (customers 501.., on shard_2, two batches, each a logical
# replication stream) killed at every step boundary and resumed, in chains; see
# crash_points.inc for what it proves. Every chain also ends with no publication, slot or
# subscription of shardctl left on either shard.
CRASH_ARGS=(move --map customers --key 700 --to shard_1 --batch-size 260 --online)
CRASH_SHARDS=2
CRASH_MAPPING="..501>shard_1 501..>shard_1"
CRASH_ONLINE=1
source "$(dirname "$0")/crash_points.inc"
