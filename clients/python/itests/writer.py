#!/usr/bin/python3
"""An application writer on the Python client, for tests/integration/t_routing_writers*.sh.
Same rows and log format as tests/integration/writer.sh (so writer_harness.sh verifies it):

    writer.py ID LOG STOPFILE   (environment: SHARDCTL_CATALOG, WRITER_ORDER_BASE,
                                 WRITER_CUSTOMER_BASE, WRITER_CUSTOMERS, WRITER_LO (default 251),
                                 WRITER_LISTEN=0: the cache neither listens nor polls,
                                 WRITER_NEW_CUSTOMERS: percent of writes that are new customers
                                 (default 15), WRITER_WAITS: a file that gets one line per
                                 acknowledged write, "EPOCH MS": when it was acknowledged (Unix
                                 seconds) and the milliseconds from its first try to its
                                 acknowledgement, retries after refusals included)

Each write, through Router.run (which retries refusals as the contract says): a new order for
an existing customer WRITER_LO..WRITER_CUSTOMERS (the rest), an update of the status (a counter,
'uID-N') of one of this writer's acknowledged orders (20%), a new customer (15%, or
WRITER_NEW_CUSTOMERS). Log lines:
  ACK  KIND CID OID SHARD VALUE           committed
  MISS KIND CID OID SHARD VALUE           an update that matched no row
  RET  KIND CID OID SHARD CONSTRAINT      a refusal Router.run retried (classified)
  UNC  KIND CID OID SHARD SQLSTATE MSG    SQLSTATE 55000 without a contract constraint name
                                          (unclassified; the writer refreshes and retries)
  REF  KIND CID OID SHARD CONSTRAINT      refused and given up (max attempts)
  AMB  KIND CID OID SHARD -               connection lost during COMMIT (outcome unknown)
  ERR  KIND CID OID SHARD SQLSTATE MSG    anything else
At the end one line 'SUM <json>' on stdout (counts, elapsed seconds).
"""
import json
import os
import random
import sys
import time

import psycopg

from shardctl_routing import AmbiguousCommit, MapCache, Refusal, Router

MAP = "customers"


def main():
    wid, log_path, stopfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    order_base = int(os.environ["WRITER_ORDER_BASE"])
    customers = int(os.environ["WRITER_CUSTOMERS"])
    lo = int(os.environ.get("WRITER_LO", "251"))
    new_customer_first = int(os.environ["WRITER_CUSTOMER_BASE"]) + wid * 100000
    rnd = random.Random(wid * 7919)
    # WRITER_LISTEN=0: a cache that hears of no change by itself (no LISTEN, no poll): it learns
    # of every move from the shards' refusals only (stale_route, fenced), as the contract says.
    listen = os.environ.get("WRITER_LISTEN", "1") != "0"
    cache = MapCache(os.environ["SHARDCTL_CATALOG"], poll_interval=1.0 if listen else 3600, listen=listen)
    # Refusals are retried until the key is served again: an offline batch holds its keys for
    # as long as its copy takes (longer on a loaded machine), and every flip of a merge's other
    # batches wakes the backoff early, so a count of a few hundred attempts can run out inside
    # one batch. The tests bound the waits themselves (WRITER_WAITS).
    router = Router(cache, max_attempts=100000, backoff=0.002, backoff_max=0.05, pool_max=2)
    log = open(log_path, "a", buffering=1)
    new_customers = int(os.environ.get("WRITER_NEW_CUSTOMERS", "15"))
    waits = open(os.environ["WRITER_WAITS"], "a") if os.environ.get("WRITER_WAITS") else None
    counts = {"ACK": 0, "MISS": 0, "RET": 0, "UNC": 0, "REF": 0, "AMB": 0, "ERR": 0}
    acked = []
    seq = 0
    t0 = time.monotonic()

    def out(tag, *fields):
        counts[tag] += 1
        log.write("\t".join([tag] + [str(f) for f in fields]) + "\n")

    def write(kind, cid, oid, value, sql, params):
        """One logical write, until it is acknowledged or definitely not."""
        first_try = time.monotonic()
        for _ in range(1000):
            shard = "?"
            try:
                o = router.run_ex(MAP, cid, lambda c: c.execute(sql, params).rowcount)
                if waits:
                    waits.write(f"{time.time():.3f} {(time.monotonic() - first_try) * 1000:.1f}\n")
                for ref in o.refusals:
                    out("RET", kind, cid, oid, ref.route.shard, ref.constraint)
                if kind == "upd_order" and o.value == 0:
                    out("MISS", kind, cid, oid, o.route.shard, value)
                    return False
                out("ACK", kind, cid, oid, o.route.shard, value)
                return True
            except Refusal as ref:
                out("REF", kind, cid, oid, ref.route.shard if ref.route else shard, ref.constraint)
                return False
            except AmbiguousCommit as e:
                out("AMB", kind, cid, oid, e.route.shard, "-")
                return False
            except psycopg.Error as e:
                msg = str(e).replace("\t", " ").replace("\n", " ")[:300]
                if e.sqlstate == "55000":
                    # Refused, but not under the contract (no constraint name it names): the
                    # transaction rolled back; refresh and try again.
                    out("UNC", kind, cid, oid, shard, e.sqlstate, msg)
                    cache.refresh(MAP)
                    time.sleep(0.002)
                    continue
                out("ERR", kind, cid, oid, shard, e.sqlstate, msg)
                return False
        out("ERR", kind, cid, oid, "?", "-", "gave up after 1000 unclassified refusals")
        return False

    while not os.path.exists(stopfile):
        seq += 1
        r = rnd.randrange(100)
        if r < 20 and acked:
            cid, oid = acked[rnd.randrange(len(acked))]
            value = f"u{wid}-{seq}"
            write("upd_order", cid, oid, value,
                  "UPDATE orders SET status = %s WHERE customer_id = %s AND order_id = %s", (value, cid, oid))
        elif r < 20 + new_customers and (new_customers or r >= 20):
            cid = new_customer_first + seq
            value = f"w{wid}-c{seq}"
            write("ins_customer", cid, 0, value,
                  "INSERT INTO customers VALUES (%s, %s, 1 + %s %% 8, timestamptz '2025-01-01 00:00+00')", (cid, value, cid))
        else:
            cid = rnd.randint(lo, customers)
            oid = order_base + wid * 100000 + seq
            value = f"w{wid}"
            if write("ins_order", cid, oid, value,
                     "INSERT INTO orders VALUES (%s, %s, timestamptz '2025-01-01 00:00+00', %s)", (cid, oid, value)):
                acked.append((cid, oid))
    elapsed = time.monotonic() - t0
    router.close()
    cache.close()
    log.close()
    if waits:
        waits.close()
    print("SUM " + json.dumps(dict(counts, elapsed=round(elapsed, 3), refusals=dict(router.refusals),
                                   cache=cache.stats)))


if __name__ == "__main__":
    main()
