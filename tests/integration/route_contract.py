# The catalog's routing contract as an application sees it (man/shardctl-init.1, ROUTING ROLE),
# run by t_route_contract.sh with /usr/bin/python3 (psycopg 3). Arguments: the catalog DSN, a
# range map of bigint keys, and the shard names to map to. Exits non-zero with a message on the
# first broken promise.
import random
import sys
import threading
import time

import psycopg

dsn, MAP, shards = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
seed = int(sys.argv[4]) if len(sys.argv) > 4 else random.randrange(1 << 30)
rng = random.Random(seed)


def fail(msg):
    print(f"route_contract.py (seed {seed}): {msg}", file=sys.stderr)
    sys.exit(1)


def connect(autocommit=True):
    return psycopg.connect(dsn, autocommit=autocommit, prepare_threshold=None)


admin = connect()
map_id = admin.execute("select map_id from shardctl.maps where name = %s", (MAP,)).fetchone()[0]
shard_ids = {n: i for n, i in admin.execute("select name, shard_id from shardctl.shards")}


def version():
    return admin.execute("select version from shardctl.maps where map_id = %s", (map_id,)).fetchone()[0]


def snapshot(conn=admin):
    rows = conn.execute("select * from shardctl.map_snapshot(%s)", (MAP,)).fetchall()
    v = rows[0][0]
    return v, {r[3]: r[4:] for r in rows if r[3] is not None}


def changes(since, conn=admin):
    return conn.execute("select * from shardctl.map_changes(%s, %s)", (MAP, since)).fetchall()


def mappings(tx):
    return tx.execute("select mapping_id, lower(int_range), upper(int_range), status from shardctl.mappings "
                      "where map_id = %s order by lower(int_range) nulls first", (map_id,)).fetchall()


# --- one version per committed change; a rollback none -------------------------------------------
v0 = version()
with connect(False) as c:
    c.execute("update shardctl.mappings set status = 'offline' where map_id = %s", (map_id,))
    c.execute("update shardctl.mappings set status = 'online' where map_id = %s", (map_id,))
    c.execute("update shardctl.mappings set status = 'offline' where map_id = %s", (map_id,))
    c.commit()
if version() != v0 + 1:
    fail(f"a transaction flipping every mapping three times made version {version()}, not {v0 + 1}")
with connect(False) as c:
    c.execute("update shardctl.mappings set status = 'online' where map_id = %s", (map_id,))
    c.rollback()
if version() != v0 + 1:
    fail("a rolled-back change moved the version")
admin.execute("update shardctl.mappings set status = 'online' where map_id = %s", (map_id,))

# --- the notice arrives at commit, with MAP:VERSION ----------------------------------------------
listener = connect()
received = []
listener.add_notify_handler(lambda n: received.append(n.payload))
listener.execute("listen shardctl_map_changed")


def notices(timeout, count):
    """The payloads received within `timeout` seconds (psycopg 3.1's notifies() has no timeout:
    a query on the connection delivers what arrived to the handler)."""
    deadline = time.monotonic() + timeout
    while len(received) < count and time.monotonic() < deadline:
        listener.execute("select 1")
        time.sleep(0.02)
    out = received[:count]
    del received[:count]
    return out


writer = connect(False)
writer.execute("update shardctl.mappings set status = 'offline' where map_id = %s and mapping_id = "
               "(select min(mapping_id) from shardctl.mappings where map_id = %s)", (map_id, map_id))
early = notices(0.3, 1)
if early:
    fail(f"a notice arrived before commit: {early}")
writer.commit()
got = notices(5, 1)
if got != [f"{MAP}:{version()}"]:
    fail(f"no notice {MAP}:{version()} at commit: {got}")

# --- two concurrent transactions: versions in commit order ---------------------------------------
ids = [r[0] for r in mappings(admin)]
a, b = connect(False), connect(False)
a.execute("update shardctl.mappings set status = 'online' where mapping_id = %s", (ids[0],))
done = threading.Event()


def second():
    b.execute("update shardctl.mappings set status = 'offline' where mapping_id = %s", (ids[1],))
    b.commit()
    done.set()


t = threading.Thread(target=second)
t.start()
time.sleep(0.5)
if done.is_set():
    fail("the second transaction committed a change while the first held the map's version")
before = version()
a.commit()
t.join(10)
if not done.is_set():
    fail("the second transaction never committed")
log = admin.execute("select version, mapping_id from shardctl.map_log where map_id = %s and version > %s order by 1",
                    (map_id, before)).fetchall()
if log != [(before + 1, ids[0]), (before + 2, ids[1])]:
    fail(f"versions not in commit order: {log}")
payloads = notices(2, 2)
if payloads != [f"{MAP}:{before + 1}", f"{MAP}:{before + 2}"]:
    fail(f"notices not in commit order: {payloads}")


# --- property: map_changes(old) applied to the old snapshot gives the new one ---------------------
def random_change(tx):
    rows = mappings(tx)
    op = rng.choice(["add", "remove", "split", "status", "shard", "app_dsn"])
    if op == "add":
        lo = rng.randrange(-10**6, 10**6)
        tx.execute("insert into shardctl.mappings (map_id, shard_id, int_range) select %s, %s, int8range(%s, %s) "
                   "where not exists (select from shardctl.mappings where map_id = %s and int_range && int8range(%s, %s))",
                   (map_id, shard_ids[rng.choice(shards)], lo, lo + rng.randrange(1, 5000), map_id, lo, lo + 5000))
    elif op == "remove" and len(rows) > 1:
        tx.execute("delete from shardctl.mappings where mapping_id = %s", (rng.choice(rows)[0],))
    elif op == "split" and rows:
        mid, lo, hi, status = rng.choice(rows)
        cut = rng.randrange(-10**9, 10**9)
        if (lo is None or lo < cut) and (hi is None or cut < hi):
            tx.execute("update shardctl.mappings set int_range = int8range(%s, %s) where mapping_id = %s", (lo, cut, mid))
            tx.execute("insert into shardctl.mappings (map_id, shard_id, int_range, status) values (%s, %s, int8range(%s, %s), %s)",
                       (map_id, shard_ids[rng.choice(shards)], cut, hi, status))
    elif op == "status" and rows:
        tx.execute("update shardctl.mappings set status = case status when 'online' then 'offline' else 'online' end "
                   "where mapping_id = %s", (rng.choice(rows)[0],))
    elif op == "shard" and rows:
        tx.execute("update shardctl.mappings set shard_id = %s where mapping_id = %s", (shard_ids[rng.choice(shards)], rng.choice(rows)[0]))
    elif op == "app_dsn":
        tx.execute("update shardctl.shards set app_dsn = %s where name = %s",
                   (rng.choice([None, f"host=bouncer port=6432 dbname=x{rng.randrange(100)}"]), rng.choice(shards)))


for case in range(60):
    v_old, old = snapshot()
    for _ in range(rng.randrange(1, 6)):
        with connect(False) as c:
            for _ in range(rng.randrange(1, 4)):
                random_change(c)
            (c.commit if rng.random() < 0.8 else c.rollback)()
    v_new, new = snapshot()
    rows = changes(v_old)
    if v_new == v_old:
        if rows:
            fail(f"case {case}: nothing committed, yet map_changes gave {rows}")
        continue
    if any(r[1] == "reload" for r in rows):
        fail(f"case {case}: reload for a version inside the log: {rows}")
    applied = dict(old)
    for r in rows:
        if r[0] != v_new:
            fail(f"case {case}: a change row carries version {r[0]}, the map is at {v_new}")
        if r[1] == "delete":
            applied.pop(r[2], None)
        else:
            applied[r[2]] = r[3:]
    if applied != new:
        fail(f"case {case}: old snapshot + changes != new snapshot\n{sorted(applied.items())}\n{sorted(new.items())}")

# --- reload: a version older than the kept log, or newer than the map ------------------------------
if changes(version() + 1)[0][1:2] != ("reload",) or len(changes(version() + 1)) != 1:
    fail(f"a future version did not give one 'reload' row: {changes(version() + 1)}")
if changes(version()) != []:
    fail("the current version gave rows")
start = version()
target = (start // 100 + 11) * 100  # past at least one pruning (every 100th version keeps the last 1000)
flip = ids[0]
with connect() as c:
    while version() < target:
        c.execute("update shardctl.mappings set status = case status when 'online' then 'offline' else 'online' end "
                  "where map_id = %s and mapping_id = (select min(mapping_id) from shardctl.mappings where map_id = %s)",
                  (map_id, map_id))
log_from = admin.execute("select log_from from shardctl.maps where map_id = %s", (map_id,)).fetchone()[0]
if log_from <= start:
    fail(f"the log was not pruned: log_from {log_from}, versions {start}..{version()}")
rows = changes(start)
if len(rows) != 1 or rows[0][1] != "reload" or rows[0][0] != version():
    fail(f"a version older than the kept log did not give one 'reload' row: {rows[:3]}")
if any(r[1] == "reload" for r in changes(log_from)):
    fail("the oldest kept version gave 'reload'")
print(f"route_contract.py: ok (seed {seed})")
