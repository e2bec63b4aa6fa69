#!/usr/bin/python3
"""stale_check.py MAP VERSION SHARD DSN KEY: one write of KEY (a customer row) on SHARD through
Router.transaction with a Route of the old VERSION, always rolled back. Prints
'REFUSED KIND MIN_VERSION' (a Refusal), or 'ACCEPTED' (the shard took it; rolled back)."""
import sys

import psycopg

from shardctl_routing import MapCache, Refusal, Router
from shardctl_routing.mapcache import Route


class Undo(Exception):
    pass


m, version, shard, dsn, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
cache = MapCache(dsn, listen=False)  # never used: the route is given
router = Router(cache)
try:
    with router.transaction(m, key, route=Route(m, version, shard, dsn, "online", False, None, None, None, None)) as c:
        c.execute("INSERT INTO customers VALUES (%s, 'stale', 1, now())", (key,))
        raise Undo()
except Refusal as r:
    print(f"REFUSED {r.kind} {r.min_version} {r.sqlstate} {r.constraint}")
except Undo:
    print("ACCEPTED")
except psycopg.Error as e:
    print(f"ERROR {e.sqlstate} {e}".replace("\n", " "))
router.close()
cache.close()
