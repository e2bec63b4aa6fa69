# Archive runs killed at every step boundary, to a directory of zstd files (archive_crash.inc).
ARCH_KIND=dir
source "$(dirname "$0")/archive_crash.inc"
