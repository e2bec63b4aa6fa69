# `op cancel` of an interrupted split, stopped after batch 2 went offline and was guarded and
# after batch 2 was copied, killed at every boundary of the cancel (cancel_crash_points.inc).
# From either stop the cancel purges the flipped batch 1 (its children first, purge.cpp), journals
# it done, rolls batch 2 back and unguards.
CANCEL_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 100)
# Each boundary after each stop, boundary by boundary: the list's k-th pair is after stop k % 2,
# so a slice of an even n (CRASH_SLICE, crash_slice.inc) stops the split at one place only.
CANCEL_POINTS=()
for p in purge.children@b1:1 purge@b1:1 journal.done@b1:1 rollback.target@b2:1 rollback.mapping@b2:1 coalesce:1 unguard:1; do
  for stop in offline.guard@b2:1 journal.copied@b2:1; do
    CANCEL_POINTS+=("$stop $p")
  done
done
source "$(dirname "$0")/cancel_crash_points.inc"
