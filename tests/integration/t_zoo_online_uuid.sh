# t_zoo_uuid.sh with every move online (ZOO_ONLINE: zoo_op adds --online): the same schemas,
# checks and negative controls, each batch a logical replication stream with a cut-over. (The
# other zoos hold tables without a primary key, which an online move refuses, 64, by design:
# t_online_cutover.sh tests that refusal.)
ZOO_ONLINE=1
source "$(dirname "$0")/t_zoo_uuid.sh"
