# Kill points 1, 3, 5, ... of a multi-batch split; see split_crash_points.inc.
CRASH_PARITY=1
source "$(dirname "$0")/split_crash_points.inc"
