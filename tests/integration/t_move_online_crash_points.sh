# An online move of a whole mapping (customers 501.., on shard_2, two batches, each a logical
# replication stream) killed at every step boundary and resumed, in chains; see
# crash_points.inc for what it proves. Every chain also ends with no publication, slot or
# subscription of shardctl left on either shard. CRASH_POINTS names each boundary of a batch's
# stream (lib/migrate/runner_online.cpp): the publication, the slot, the copy, the subscription,
# catch-up, the comparison, the cut-over, offline, the flip, the stream dropped. A cut-over
# that gives up (a transaction held open on shard_2, the source, from before the move) is killed
# there and resumed.
CRASH_ARGS=(move --map customers --key 700 --to shard_1 --batch-size 260 --online)
CRASH_SHARDS=2
CRASH_MAPPING="..501>shard_1 501..>shard_1"
CRASH_ONLINE=1
CRASH_POINTS=(
  references:1
  online.streaming@b1:1 online.publication@b1:1 online.slot@b1:1 copy.table@b1:1 copy.table@b1:2
  copy.table@b1:3 online.copied@b1:1 online.subscription@b1:1 journal.copied@b1:1
  online.caught_up@b1:1 online.compared@b1:1 online.cutover@b1:1 verify@b1:1 online.offline@b1:1
  flip@b1:1 journal.flipped@b1:1 online.dropped@b1:1 purge.children@b1:1 purge@b1:1
  journal.done@b1:1
  online.streaming@b2:1 online.publication@b2:1 online.slot@b2:1 copy.table@b2:1 copy.table@b2:2
  copy.table@b2:3 online.copied@b2:1 online.subscription@b2:1 journal.copied@b2:1
  online.caught_up@b2:1 online.compared@b2:1 online.cutover@b2:1 verify@b2:1 online.offline@b2:1
  flip@b2:1 journal.flipped@b2:1 online.dropped@b2:1 purge.children@b2:1 purge@b2:1
  journal.done@b2:1
  coalesce:1 unguard:1 finished:1
)
CRASH_GIVE_UP=(online.gave_up@b1:1)
CRASH_GIVE_UP_HOLD=2
source "$(dirname "$0")/crash_points.inc"
