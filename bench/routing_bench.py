#!/usr/bin/python3
"""The Python routing client's costs (run by bench/routing_bench.sh, which makes the sandbox,
the PgBouncer and the fleet). One mode per run: 'direct' (the shards' own DSNs) or
'pgbouncer' (app_dsn points at a PgBouncer in transaction pooling).

    routing_bench.py MODE CATALOG_DSN BIN_DIR   -> one JSON object on stdout, '# ...' on stderr

Measures, each next to its target:
  route      local routing per key with a warm cache (range and hash map), p50/p99, relative
             to a one-row INSERT's p50 (target: adds under 5%)
  check      a transaction with vs without SET LOCAL shardctl.route = ... (as Router states it) on a shard
             with a route floor (target: under 0.1 ms)
  notice     a committed map change to the cache holding it, by NOTIFY alone (target < 50 ms)
  flip       the flip of a move to the first write acknowledged on the new shard (target < 250 ms)
"""
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
from shardctl_routing import MapCache, Router  # noqa: E402

MODE, CATALOG, BIN = sys.argv[1], sys.argv[2], sys.argv[3]
MAP = "customers"
rnd = random.Random(7)
res = {"mode": MODE}


def log(msg):
    print(f"# [{MODE}] {msg}", file=sys.stderr, flush=True)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


cat = psycopg.connect(CATALOG, autocommit=True)
cache = MapCache(CATALOG, poll_interval=5)
router = Router(cache)
cache.listening(30)
order = 20_000_000 + (0 if MODE == "direct" else 5_000_000)


def next_order():
    global order
    order += 1
    return order


# --- route per key vs a one-row INSERT -----------------------------------------------------------
for m in (MAP, "bench_hash"):
    cache.get(m)
keys = [rnd.randint(1, 1000) for _ in range(100_000)]
for m, label in ((MAP, "route_range"), ("bench_hash", "route_hash")):
    t = []
    route = cache.route
    for k in keys:
        t0 = time.perf_counter_ns()
        route(m, k)
        t.append(time.perf_counter_ns() - t0)
    res[label] = {"p50_us": pct(t, 0.5) / 1e3, "p99_us": pct(t, 0.99) / 1e3}
r = cache.route(MAP, 100)
ins = []
with psycopg.connect(r.dsn, autocommit=True, prepare_threshold=None) as c:
    for i in range(3000):
        oid = next_order()
        t0 = time.perf_counter_ns()
        c.execute("INSERT INTO orders VALUES (%s, %s, now(), 'bench')", (100, oid))
        ins.append(time.perf_counter_ns() - t0)
res["insert"] = {"p50_us": pct(ins, 0.5) / 1e3, "p99_us": pct(ins, 0.99) / 1e3}
for label in ("route_range", "route_hash"):
    res[label]["ratio_to_insert_p50"] = res[label]["p50_us"] / res["insert"]["p50_us"]
log(f"route {res['route_range']}, hash {res['route_hash']}, one-row INSERT {res['insert']}")

# --- the version check per transaction -----------------------------------------------------------
def version_check(key):
    """A transaction (BEGIN, one-row INSERT, COMMIT) with vs without the version stated, in the
    same round trip as BEGIN as Router does, interleaved; medians."""
    r = cache.route(MAP, key)
    with psycopg.connect(r.dsn, autocommit=True, prepare_threshold=None) as c:
        floor = None
        if c.execute("SELECT to_regclass('shardctl.route_floors') IS NOT NULL").fetchone()[0]:
            floor = c.execute("SELECT max(min_version) FROM shardctl.route_floors WHERE map_name = %s", (MAP,)).fetchone()[0]
        setting = f"BEGIN; SET LOCAL shardctl.route = '{MAP}:{cache.version(MAP)}'"
        with_, without = [], []
        for i in range(4000):
            for stated in ((True, False) if i % 2 else (False, True)):
                oid = next_order()
                t0 = time.perf_counter_ns()
                c.execute(setting if stated else "BEGIN")
                c.execute("INSERT INTO orders VALUES (%s, %s, now(), 'bench')", (key, oid))
                c.execute("COMMIT")
                (with_ if stated else without).append(time.perf_counter_ns() - t0)
    return {"shard": r.shard, "floor": floor, "with_p50_us": pct(with_, 0.5) / 1e3, "without_p50_us": pct(without, 0.5) / 1e3,
            "added_ms": (statistics.median(with_) - statistics.median(without)) / 1e6}


res["check"] = version_check(300)           # shard_2 (251..400 in both modes): the split in routing_bench.sh left a floor
res["check_floor"] = res["check"]["floor"]
res["check_nofloor"] = version_check(100)   # shard_1 (..251): no key ever moved off it
log(f"version check: with a floor {res['check']}, without {res['check_nofloor']}")

# --- notice -> cache updated ---------------------------------------------------------------------
base = cat.execute("SELECT coalesce(app_dsn, dsn) FROM shardctl.shards WHERE name = 'shard_4'").fetchone()[0]
lat = []
cache.notice_latencies.clear()
for i in range(60):
    t0 = time.perf_counter()
    cat.execute("UPDATE shardctl.shards SET app_dsn = %s WHERE name = 'shard_4'", (f"{base} connect_timeout={10 + i % 2}",))
    v = cat.execute("SELECT version FROM shardctl.maps WHERE name = %s", (MAP,)).fetchone()[0]
    cache.wait_for_version(MAP, v, timeout=10, ask=False)
    lat.append(time.perf_counter() - t0)
res["notice"] = {"commit_to_cache_p50_ms": pct(lat, 0.5) * 1e3, "commit_to_cache_max_ms": max(lat) * 1e3,
                 "notice_read_to_cache_p50_ms": pct(cache.notice_latencies, 0.5) * 1e3}
log(f"notice: {res['notice']}")

# --- flip -> first write acknowledged on the new shard -------------------------------------------
# Keys away from 251..400 (shard_2, the check above) so that both modes check on the same shard.
key, target = (600, "shard_1") if MODE == "direct" else (800, "shard_2")
src = cache.route(MAP, key).shard
flip_at = {}
stop = threading.Event()
listening = threading.Event()


def watch():
    # A listener of its own: the flip is the first notice after which route(key) names target.
    with psycopg.connect(CATALOG, autocommit=True) as lc, psycopg.connect(CATALOG, autocommit=True) as q:
        lc.execute("LISTEN shardctl_map_changed")
        listening.set()
        for n in lc.notifies():
            t = time.perf_counter()
            if q.execute("SELECT shard FROM shardctl.route(%s, %s::bigint)", (MAP, key)).fetchone()[0] == target:
                flip_at["t"] = t
                return


acks = []


def writer():
    while not stop.is_set():
        oid = next_order()
        for _ in range(10000):
            try:
                o = router.run_ex(MAP, key, lambda c: c.execute(
                    "INSERT INTO orders VALUES (%s, %s, now(), 'flip')", (key, oid)), max_attempts=1000)
                acks.append((time.perf_counter(), o.route.shard))
                break
            except psycopg.Error as e:
                if e.sqlstate != "55000":
                    raise
                # A refusal without the contract's constraint name (shards without the shard
                # side): what the contract's 'moving'/'fenced' would make Router.run do.
                cache.refresh(MAP)
                time.sleep(0.002)


tw = threading.Thread(target=watch, daemon=True)
tw.start()
listening.wait(10)
tww = threading.Thread(target=writer)
tww.start()
out = subprocess.run([f"{BIN}/shardctl", "move", "--map", MAP, "--key", str(key), "--to", target, "--batch-size", "100000"],
                     capture_output=True, text=True)
if out.returncode != 0:
    raise SystemExit(f"move failed: {out.stderr}")
deadline = time.monotonic() + 30
while time.monotonic() < deadline and not any(s == target for _, s in acks):
    time.sleep(0.01)
stop.set()
tww.join()
tw.join(5)
first = min((t for t, s in acks if s == target), default=None)
res["flip"] = {"from": src, "to": target, "writes": len(acks),
               "flip_to_first_ack_ms": (first - flip_at["t"]) * 1e3 if first and "t" in flip_at else None}
log(f"flip: {res['flip']}")
router.close()
cache.close()
print(json.dumps(res))
