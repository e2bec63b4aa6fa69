#!/usr/bin/python3
"""stale_check.py MAP VERSION SHARD DSN KEY: one write of KEY (an order) on SHARD through
Router.transaction with a Route of the old VERSION, always rolled back. Prints
'REFUSED KIND MIN_VERSION' (a Refusal), or 'ACCEPTED' (the shard took it; rolled back)."""
import sys

from shardctl_routing import MapCache, Refusal, Router
from shardctl_routing.mapcache import Route


class Undo(Exception):
    pass


m, version, shard, dsn, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
cache = MapCache(dsn, listen=False)  # never used: the route is given
router = Router(cache)
try:
    with router.transaction(m, key, route=Route(m, version, shard, dsn, "online", False, None, None, None, None)) as c:
        c.execute("INSERT INTO orders VALUES (%s, 1999999999 - 1, now(), 'stale')", (key,))
        raise Undo()
except Refusal as r:
    print(f"REFUSED {r.kind} {r.min_version} {r.sqlstate} {r.constraint}")
except Undo:
    print("ACCEPTED")
router.close()
cache.close()
