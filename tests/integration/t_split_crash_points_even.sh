# Kill points 0, 2, 4, ... of a multi-batch split; see split_crash_points.inc.
CRASH_PARITY=0
source "$(dirname "$0")/split_crash_points.inc"
