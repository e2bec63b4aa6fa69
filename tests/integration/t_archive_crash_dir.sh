# An archive run to a directory of zstd files, killed at every step boundary and resumed, in
# chains; see archive_crash.inc for what it proves.
ARCH_KIND=dir
source "$(dirname "$0")/archive_crash.inc"
