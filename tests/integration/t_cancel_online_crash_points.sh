# `op cancel` of an interrupted split --online, stopped with batch 2 in each state of its stream
# (lib/migrate/online.hpp): copied but journaled streaming (its slot and publication made: the
# same roll back as a stream stopped before its copy); journaled copied, its range in cut-over
# on the source; its range offline after a cut-over, not flipped. Each cancel is killed at every boundary (cancel_crash_points.inc) and must leave the
# source as it was, with no publication, slot or subscription on either shard.
CANCEL_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 100 --online)
CANCEL_STOPS=(online.copied@b2:1 online.cutover@b2:1 online.offline@b2:1)
CANCEL_ONLINE=1
source "$(dirname "$0")/cancel_crash_points.inc"
