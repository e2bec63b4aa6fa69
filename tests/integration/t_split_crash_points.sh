# A split of two batches (three tables each) killed at every step boundary and resumed, in
# chains, plus isolated kills; see crash_points.inc for what it proves. (Replaces
# t_split_crash_points_odd and _even, which killed the even and the odd boundaries on a fresh
# fleet each.)
CRASH_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..150>shard_1 150..501>shard_2 501..>shard_2"
source "$(dirname "$0")/crash_points.inc"
