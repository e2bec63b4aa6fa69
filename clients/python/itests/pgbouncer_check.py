#!/usr/bin/python3
"""The client behind PgBouncer 1.18 in transaction pooling with one server connection per
shard (run by tests/integration/t_pgbouncer_routing.sh, which made the fleet, the PgBouncer,
pointed the shards' app_dsn at it and split 400..501 off shard_2 to shard_4).

Environment: SHARDCTL_CATALOG; PGB_DSN_PREFIX (PgBouncer's DSN without dbname); OLD_VERSION
(the map's version before the split); SHARDSIDE=1 when the shards have the shard side of the
routing contract (refusals by floor), else the assertions that need it print '# PENDING: ...'.
"""
import os
import sys

import psycopg

from shardctl_routing import MapCache, Refusal, Router
from shardctl_routing.mapcache import Route

MAP = "customers"
CATALOG = os.environ["SHARDCTL_CATALOG"]
PGB = os.environ["PGB_DSN_PREFIX"]
OLD = int(os.environ["OLD_VERSION"])
SHARDSIDE = os.environ.get("SHARDSIDE") == "1"
BASE = 5_000_000  # order ids of this test


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def pending(what):
    print(f"# PENDING: {what}")


def pgb(db):
    return psycopg.connect(f"{PGB} dbname={db}", autocommit=True, prepare_threshold=None)


def setting(conn):
    return conn.execute("SELECT current_setting('shardctl.route', true), pg_backend_pid()").fetchone()


cat = psycopg.connect(CATALOG, autocommit=True)
# What applications are given for each shard: its app_dsn (as the catalog keeps it), PgBouncer's.
APP_DSN = dict(cat.execute("SELECT name, app_dsn FROM shardctl.shards").fetchall())
PGB_HOST = next(p for p in PGB.split() if p.startswith("host="))
check(all(d is not None and PGB_HOST in d.split() and "port=6432" in d.split() for d in APP_DSN.values()),
      f"app_dsn does not point at PgBouncer: {APP_DSN}")
cache = MapCache(CATALOG, poll_interval=1)
router = Router(cache)
version = cache.get(MAP).version
check(version > OLD, f"cache version {version} not past the split's start {OLD}")

# --- 1. the client works through PgBouncer --------------------------------------------------
oid = BASE
landed = {}
for i in range(200):
    cid = 1 + (i * 37) % 1000
    oid += 1
    out = router.run_ex(MAP, cid, lambda c, cid=cid, oid=oid: c.execute(
        "INSERT INTO orders VALUES (%s, %s, now(), %s)", (cid, oid, f"pgb{oid}")).rowcount)
    check(out.value == 1, f"insert of {cid}/{oid}: {out.value} rows")
    check(out.route.dsn == APP_DSN[out.route.shard], f"routed to {out.route.dsn}, not through PgBouncer")
    landed[(cid, oid)] = out.route.shard
check(set(landed.values()) == {"shard_1", "shard_2", "shard_3", "shard_4"}, f"shards written: {set(landed.values())}")
# Each row is on the shard the catalog routes its key to (read back through PgBouncer too).
for (cid, oid), shard in landed.items():
    want = cat.execute("SELECT shard FROM shardctl.route(%s, %s::bigint)", (MAP, cid)).fetchone()[0]
    check(shard == want, f"{cid} written to {shard}, route() says {want}")
    with pgb(shard) as c:
        n = c.execute("SELECT count(*) FROM orders WHERE customer_id = %s AND order_id = %s", (cid, oid)).fetchone()[0]
    check(n == 1, f"order {cid}/{oid} found {n} times on {shard}")
print(f"# 200 transactions through PgBouncer (parameters, no prepared statements), each on its routed shard")

# --- 2. two clients, one server connection; set_config(..., true) stays in its transaction --
a, b = pgb("shard_2"), pgb("shard_2")
_, pid_a = setting(a)
_, pid_b = setting(b)
check(pid_a == pid_b, f"two clients of shard_2 got server connections {pid_a} and {pid_b} (want one shared)")
with a.transaction():
    a.execute("SELECT set_config('shardctl.route', %s, true)", (f"{MAP}:{OLD}",))
    val, pid = setting(a)
    check(val == f"{MAP}:{OLD}", f"inside its transaction A reads {val!r}")
val, pid = setting(b)
check(pid == pid_a and val in (None, ""), f"B (server connection {pid}) reads {val!r} after A's transaction")
print(f"# clients A and B share server connection {pid_a}; A's set_config(..., true) is gone for B: {val!r}")

# --- 3. a stale version is refused in its own transaction only ------------------------------
floor = None
with pgb("shard_2") as c:
    if SHARDSIDE:
        floor = c.execute("SELECT min_version FROM shardctl.route_floors WHERE map_name = %s", (MAP,)).fetchone()
        check(floor is not None and floor[0] > OLD, f"shard_2's floor for {MAP}: {floor} (want > {OLD})")
        floor = floor[0]
stale_ok = None
try:
    with a.transaction():
        a.execute("SELECT set_config('shardctl.route', %s, true)", (f"{MAP}:{OLD}",))
        a.execute("INSERT INTO orders VALUES (300, %s, now(), 'stale')", (BASE + 1001,))
    stale_ok = True
except psycopg.Error as e:
    ref = Refusal.from_error(e)
    check(ref is not None, f"the stale write failed otherwise than by a contract refusal: {e.sqlstate} {e}")
    check(ref.kind == "stale_route" and ref.detail.get("stated_version") == OLD and ref.min_version == floor,
          f"refusal {ref.kind} {ref.detail}")
    stale_ok = False
# B, next on the same server connection, states nothing: not refused.
with b.transaction():
    val, pid = setting(b)
    b.execute("INSERT INTO orders VALUES (300, %s, now(), 'next')", (BASE + 1002,))
check(pid == pid_a and val in (None, ""), f"B after the refusal: server connection {pid}, setting {val!r}")
if SHARDSIDE:
    check(stale_ok is False, f"a write stating {MAP}:{OLD} (below shard_2's floor {floor}) was accepted")
    print(f"# stale {MAP}:{OLD} refused (stale_route, floor {floor}) in A's transaction; B's next one on the same server connection was not")
else:
    pending(f"a write stating {MAP}:{OLD} on shard_2 is refused stale_route by the floor the split raised "
            f"(it was {'accepted' if stale_ok else 'refused'}; no floors without the shard side)")
    print(f"# B's transaction after A's stale one, on the same server connection, stated nothing and was not refused")

# The router with a cache frozen at the old version: refused once, refreshes, succeeds.
frozen_route = Route(MAP, OLD, "shard_2", APP_DSN["shard_2"], "online", False, "251", "501", None, None)
if SHARDSIDE:
    try:
        with router.transaction(MAP, 300, route=frozen_route) as c:
            c.execute("INSERT INTO orders VALUES (300, %s, now(), 'frozen')", (BASE + 1003,))
        fail("router.transaction with a route of version below the floor was not refused")
    except Refusal as ref:
        check(ref.kind == "stale_route" and ref.sqlstate == "55000" and ref.min_version == floor, f"{ref.kind} {ref.detail}")
    print(f"# Router.transaction with a stale Route raised Refusal(kind=stale_route, min_version={floor})")
else:
    pending("Router.transaction with a Route of the old version raises Refusal(stale_route)")

# --- 4. the negative control: a session-level SET leaks to the next client ------------------
a.execute(f"SET shardctl.route = '{MAP}:{OLD}'")
val, pid = setting(b)
check(pid == pid_a, f"B got server connection {pid}, not the shared {pid_a}")
check(val == f"{MAP}:{OLD}", f"a session-level SET by A did not reach B (B reads {val!r}): the control shows nothing")
print(f"# negative control: A's session-level SET shardctl.route = '{MAP}:{OLD}' is read by B: {val!r}")
if SHARDSIDE:
    try:
        with b.transaction():
            b.execute("INSERT INTO orders VALUES (300, %s, now(), 'leaked')", (BASE + 1004,))
        fail("B's write under A's leaked stale SET was accepted")
    except psycopg.Error as e:
        ref = Refusal.from_error(e)
        check(ref is not None and ref.kind == "stale_route", f"B's write under the leaked SET: {e}")
    print("# ... and B's write, stating nothing itself, was refused stale_route because of it")
else:
    pending("B's write under A's leaked session-level SET is refused stale_route")
b.execute("RESET shardctl.route")
check(setting(a)[0] in (None, ""), "the leaked setting is still there after RESET")
a.close()
b.close()
router.close()
cache.close()
print("# pgbouncer_check: ok")
