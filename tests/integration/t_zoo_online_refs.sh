# t_zoo_refs.sh with every move online (ZOO_ONLINE: zoo_op adds --online, the table without a
# primary key gets a replica identity that covers the key, each move's first batch streams
# writes, and the refusals are asked of online moves, zoo_lib.sh): the same schemas, checks and
# negative controls. Batches of 70 keys instead of 30-50 (ZOO_BATCH_SIZE: still two or more per
# operation), as each online batch is a replication stream of its own: 14 streams instead of 29.
ZOO_ONLINE=1
ZOO_BATCH_SIZE=70
source "$(dirname "$0")/t_zoo_refs.sh"
