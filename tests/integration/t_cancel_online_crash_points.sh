# `op cancel` of an interrupted split --online, stopped with batch 2 at each boundary of its
# stream before the flip (lib/migrate/runner_online.cpp): journaled streaming with its
# publication made; with its slot made too (the snapshot's exporting connection gone with the
# process); copied under the slot's snapshot; with the subscription made on the target;
# journaled copied, its range in cut-over on the source; its range offline after a cut-over,
# not flipped. Each cancel is killed at every boundary (cancel_crash_points.inc) and must leave
# the data as it was, the keys writable on the source, no offline range or mapping, and no
# publication, slot or subscription on either shard. Batch 1 is purged before batch 2's stream
# starts (online.hpp), so from every stop the cancel only rolls batch 2 back and unguards.
CANCEL_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 100 --online)
# Each boundary after each stop, boundary by boundary: the list's k-th pair is after stop k % 6,
# so a slice (CRASH_SLICE, crash_slice.inc) stops the split at few places: one when n is 6.
CANCEL_POINTS=()
for p in rollback.target@b2:1 rollback.mapping@b2:1 coalesce:1 unguard:1; do
  for stop in online.publication@b2:1 online.slot@b2:1 online.copied@b2:1 online.subscription@b2:1 \
              online.cutover@b2:1 online.offline@b2:1; do
    CANCEL_POINTS+=("$stop $p")
  done
done
CANCEL_ONLINE=1
source "$(dirname "$0")/cancel_crash_points.inc"
