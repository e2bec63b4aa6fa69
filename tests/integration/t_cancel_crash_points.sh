# `op cancel` of an interrupted split, stopped after batch 2 went offline and was guarded and
# after batch 2 was copied, killed at every boundary of the cancel (cancel_crash_points.inc).
CANCEL_ARGS=(split --map customers --at 150 --to shard_2 --batch-size 100)
CANCEL_STOPS=(offline.guard@b2:1 journal.copied@b2:1)
source "$(dirname "$0")/cancel_crash_points.inc"
