# A merge from two source shards (one batch each) killed at every step boundary and resumed,
# in chains, plus isolated kills; see crash_points.inc for what it proves.
CRASH_ARGS=(merge --map customers --range 200..700 --into shard_1 --batch-size 400)
CRASH_SHARDS=3
CRASH_MAPPING="..700>shard_1 700..>shard_3"
CRASH_POINTS=(
  references:1
  offline.mapping@b1:1 offline.guard@b1:1 journal.offline@b1:1 copy.table@b1:1 copy.table@b1:2
  copy.table@b1:3 copy.commit@b1:1 journal.copied@b1:1 verify@b1:1 flip@b1:1 journal.flipped@b1:1
  offline.mapping@b2:1 offline.guard@b2:1 journal.offline@b2:1 copy.table@b2:1 copy.table@b2:2
  copy.table@b2:3 copy.commit@b2:1 journal.copied@b2:1 verify@b2:1 flip@b2:1 journal.flipped@b2:1
  purge@b1:1 journal.done@b1:1
  purge.children@b2:1 purge@b2:1 journal.done@b2:1
  coalesce:1 unguard:1 finished:1
)
source "$(dirname "$0")/crash_points.inc"
