# t_zoo_uuid.sh with every move online (ZOO_ONLINE: zoo_op adds --online, and each move's first
# batch streams writes, zoo_lib.sh): the same schemas, checks and negative controls, each batch
# a logical replication stream with a cut-over. (The other zoos online: t_zoo_online_*.sh.)
ZOO_ONLINE=1
source "$(dirname "$0")/t_zoo_uuid.sh"
