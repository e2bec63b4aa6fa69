# The checked path (FK triggers not skipped on load and purge: SHARDCTL_CHECKED_LOAD=1,
# lib/migrate/load_path.hpp) of the split t_split_crash_points.sh runs on the fast path, killed
# at every step boundary and resumed, in chains, plus isolated kills; see crash_points.inc.
# Its boundaries are the fast path's but one: the checked purge is one transaction, with no
# purge.children between the children's commit and the parents' (lib/migrate/purge.cpp).
export SHARDCTL_CHECKED_LOAD=1
CRASH_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 200)
CRASH_SHARDS=2
CRASH_MAPPING="..150>shard_1 150..501>shard_2 501..>shard_2"
CRASH_POINTS=(
  references:1
  offline.mapping@b1:1 offline.guard@b1:1 journal.offline@b1:1 copy.table@b1:1 copy.table@b1:2
  copy.table@b1:3 copy.commit@b1:1 journal.copied@b1:1 verify@b1:1 flip@b1:1 journal.flipped@b1:1
  offline.mapping@b2:1 offline.guard@b2:1 journal.offline@b2:1 copy.table@b2:1 copy.table@b2:2
  copy.table@b2:3 copy.commit@b2:1 journal.copied@b2:1 verify@b2:1 flip@b2:1 journal.flipped@b2:1
  purge@b1:1
  purge@b2:1
  journal.done@b1:1
  journal.done@b2:1
  coalesce:1 unguard:1 finished:1
)
source "$(dirname "$0")/crash_points.inc"
