# t_zoo_text.sh with every move online (ZOO_ONLINE: zoo_op adds --online, the tables without a
# primary key get a replica identity that covers the key, and each move's first batch streams
# writes, zoo_lib.sh): the same schemas, checks and negative controls.
ZOO_ONLINE=1
source "$(dirname "$0")/t_zoo_text.sh"
