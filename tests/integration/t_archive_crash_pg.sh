# An archive run to a PostgreSQL archive database, killed at every step boundary and resumed,
# in chains; see archive_crash.inc for what it proves.
ARCH_KIND=pg
source "$(dirname "$0")/archive_crash.inc"
