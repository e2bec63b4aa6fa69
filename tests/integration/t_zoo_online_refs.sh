# t_zoo_refs.sh with its moves online (ZOO_ONLINE: zoo_op adds --online, the table without a
# primary key gets a replica identity that covers the key, each move's first batch streams
# writes, and the refusals are asked of online moves, zoo_lib.sh): the same schemas, checks and
# negative controls, and two of its five operations (the first split and the last move: the
# three between take the same tables and shapes, t_zoo_refs.sh says so where it leaves them out).
ZOO_ONLINE=1
source "$(dirname "$0")/t_zoo_refs.sh"
