# Archive runs killed at every step boundary, to a PostgreSQL archive database (archive_crash.inc).
ARCH_KIND=pg
source "$(dirname "$0")/archive_crash.inc"
