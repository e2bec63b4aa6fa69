#!/usr/bin/python3
"""The MapCache against a real catalog (run by tests/integration/t_client_cache.sh).

    cache_check.py   (environment: SHARDCTL_CATALOG, SHARDCTL_BIN, CACHE_LISTEN_ROLE)

1. the snapshot is loaded and routes every sample key as shardctl.route() does;
2. a split (real mapping changes) reaches the cache through NOTIFY alone (the cache does not
   ask), and the cache then equals a fresh snapshot; notice -> cache updated is measured;
3. with the listening connection killed (and its role unable to log in again), changes still
   reach the cache, by polling; once it can log in again it listens again;
4. 8 threads needing the same new version at once cause exactly one map_changes call.
Prints '# ...' lines; exits 1 with 'FAIL: ...' on a failed assertion.
"""
import os
import statistics
import subprocess
import sys
import threading
import time

import psycopg

from shardctl_routing import MapCache
from shardctl_routing.mapcache import state_from_snapshot

MAP = "customers"
CATALOG = os.environ["SHARDCTL_CATALOG"]
BIN = os.environ["SHARDCTL_BIN"]
ROLE = os.environ["CACHE_LISTEN_ROLE"]
# The cache reads the catalog as a routing role (`shardctl init --grant-routing`): EXECUTE on
# route, map_snapshot and map_changes, nothing else.
ROUTER_DSN = os.environ.get("CACHE_ROUTING_DSN") or CATALOG


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


cat = psycopg.connect(CATALOG, autocommit=True)


def catalog_version():
    return cat.execute("SELECT version FROM shardctl.maps WHERE name = %s", (MAP,)).fetchone()[0]


def bump():
    """One committed change of the map (a shard's app DSN, which every client must follow);
    returns the version it made."""
    cat.execute("UPDATE shardctl.shards SET app_dsn = dsn || ' application_name=cache_' || (random() * 1e9)::bigint"
                " WHERE name = 'shard_2'")
    return catalog_version()


def assert_equals_catalog(cache, label):
    rows = cat.execute("SELECT * FROM shardctl.map_snapshot(%s)", (MAP,)).fetchall()
    want = state_from_snapshot(MAP, rows)
    got = cache.get(MAP)
    check((got.version, got.mappings) == (want.version, want.mappings),
          f"{label}: cache (version {got.version}) differs from the catalog's snapshot (version {want.version}):"
          f" {sorted(got.mappings.items())} vs {sorted(want.mappings.items())}")


def assert_routes_like_server(cache, keys, label):
    for k in keys:
        shard, dsn, status, low, high, version = cat.execute(
            "SELECT shard, dsn, status, low, high, version FROM shardctl.route(%s, %s::bigint)", (MAP, k)).fetchone()
        r = cache.route(MAP, k)
        check((r.shard, r.dsn, r.status, r.low, r.high, r.version) == (shard, dsn, status, low, high, version),
              f"{label}: key {k}: cache {r} vs route() {(shard, dsn, status, low, high, version)}")


def wait(cond, what, timeout=60.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            fail(f"gave up waiting (hang guard, {timeout} s) for: {what}")
        time.sleep(0.01)


ok = False
cat.execute(f'CREATE ROLE "{ROLE}" LOGIN')
try:
    listen_dsn = f"{CATALOG} user={ROLE}"
    if ROUTER_DSN != CATALOG:
        with psycopg.connect(ROUTER_DSN, autocommit=True) as rc:
            try:
                rc.execute("SELECT count(*) FROM shardctl.mappings")
                fail("the routing role reads shardctl.mappings")
            except psycopg.errors.InsufficientPrivilege:
                pass
        print("# the cache reads the catalog as a routing role (it cannot read shardctl.mappings)")
    cache = MapCache(ROUTER_DSN, listen_dsn=listen_dsn, poll_interval=0.3)
    check(cache.listening(30), "the cache never listened")

    # --- 1. snapshot --------------------------------------------------------------------------
    st = cache.get(MAP)
    check(st.version == catalog_version() and st.kind == "range" and st.key_type == "bigint" and len(st.mappings) == 4,
          f"snapshot: {st.version} {st.kind} {st.key_type} {len(st.mappings)} mappings")
    check(cache.stats["snapshots"] == 1, f"snapshots taken: {cache.stats['snapshots']}")
    assert_routes_like_server(cache, [1, 250, 251, 500, 501, 750, 751, 999, 10**12, -5], "snapshot")
    print(f"# snapshot loaded: version {st.version}, {len(st.mappings)} mappings")

    # --- 2. a split reaches the cache through NOTIFY ------------------------------------------
    n0 = dict(cache.stats)
    out = subprocess.run([f"{BIN}/shardctl", "split", "--map", MAP, "--at", "900", "--to", "shard_1", "--batch-size", "1000"],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"split exited {out.returncode}: {out.stderr}")
    v = catalog_version()
    check(v > st.version + 1, f"the split made versions {st.version}..{v}")
    cache.wait_for_version(MAP, v, timeout=60, ask=False)   # the cache does not ask: notices only
    check(cache.stats["notices"] > n0["notices"], "no notice was heard")
    check(cache.stats["polls"] == n0["polls"], "the cache polled while listening")
    assert_equals_catalog(cache, "after the split")
    assert_routes_like_server(cache, [899, 900, 950, 999, 10**6], "after the split")
    check(cache.route(MAP, 950).shard == "shard_1", "950 is not routed to shard_1 after the split")
    print(f"# split: versions {st.version + 1}..{v} reached the cache by {cache.stats['notices'] - n0['notices']} notice(s),"
          f" {cache.stats['map_changes_calls'] - n0['map_changes_calls']} map_changes call(s)")

    # notice -> cache updated, and commit -> cache updated, over 20 changes
    commit_to_cache = []
    cache.notice_latencies.clear()
    for _ in range(20):
        t0 = time.monotonic()
        v = bump()
        cache.wait_for_version(MAP, v, timeout=60, ask=False)
        commit_to_cache.append(time.monotonic() - t0)
    nl = sorted(cache.notice_latencies)
    check(len(nl) >= 1, "no notice latency recorded")
    print(f"# notice read -> cache updated: {len(nl)} notices, median {statistics.median(nl) * 1e3:.2f} ms, max {nl[-1] * 1e3:.2f} ms")
    print(f"# commit returned -> cache updated (20 changes): median {statistics.median(commit_to_cache) * 1e3:.2f} ms,"
          f" max {max(commit_to_cache) * 1e3:.2f} ms")
    assert_equals_catalog(cache, "after 20 changes")

    # --- 3. the listening connection lost: polling ---------------------------------------------
    pid = cache.listen_backend_pid
    check(pid is not None, "no listening backend")
    cat.execute(f'ALTER ROLE "{ROLE}" NOLOGIN')      # it cannot come back by itself
    cat.execute("SELECT pg_terminate_backend(%s)", (pid,))
    wait(lambda: cache.stats["listen_losses"] >= 1, "the cache to notice its listening connection is gone")
    check(not cache.listening(0), "the cache says it listens")
    n1 = dict(cache.stats)
    v = bump()
    cache.wait_for_version(MAP, v, timeout=60, ask=False)
    # Nothing else refreshes this cache (no notice, and it was not asked): a poll brought it.
    check(cache.stats["notices"] == n1["notices"], "a notice arrived although nobody listened")
    wait(lambda: cache.stats["polls"] > n1["polls"], "the poll that brought the version to complete")
    check(cache.stats["listen_connects"] == 1, f"reconnected {cache.stats['listen_connects'] - 1} time(s) without LOGIN")
    assert_equals_catalog(cache, "by polling")
    print(f"# listener killed (backend {pid}): version {v} reached the cache by polling"
          f" ({cache.stats['polls'] - n1['polls']} poll(s) so far)")
    cat.execute(f'ALTER ROLE "{ROLE}" LOGIN')
    check(cache.listening(60), "the cache did not listen again once it could")
    check(cache.stats["listen_connects"] == 2, f"listen_connects {cache.stats['listen_connects']}")
    n2 = dict(cache.stats)
    v = bump()
    cache.wait_for_version(MAP, v, timeout=60, ask=False)
    check(cache.stats["notices"] > n2["notices"], "after reconnecting, a change did not arrive by notice")
    print(f"# listening again (backend {cache.listen_backend_pid}): version {v} arrived by notice")
    cache.close()

    # --- 4. one refresh in flight per map ------------------------------------------------------
    quiet = MapCache(ROUTER_DSN, listen=False, poll_interval=3600)
    quiet.get(MAP)
    v = bump()
    waiters = 7

    def hold_until_all_wait(name):
        # The one refresh in flight stays in flight until the 7 others are waiting on it.
        wait(lambda: quiet.stats["refresh_waits"] >= waiters, "7 threads to wait on the refresh in flight")

    quiet._test_hook_before_fetch = hold_until_all_wait
    c0 = dict(quiet.stats)
    barrier = threading.Barrier(waiters + 1)
    results, errors = [], []

    def worker():
        barrier.wait()
        try:
            results.append(quiet.refresh(MAP, min_version=v).version)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(waiters + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(not errors, f"refresh errors: {errors}")
    calls = quiet.stats["map_changes_calls"] - c0["map_changes_calls"]
    check(len(results) == 8 and all(r >= v for r in results), f"results {results}, want all >= {v}")
    check(calls == 1, f"8 concurrent callers made {calls} map_changes calls")
    check(quiet.stats["snapshots"] == c0["snapshots"], "a snapshot was taken")
    check(quiet.stats["refresh_waits"] - c0["refresh_waits"] == waiters, f"waits {quiet.stats['refresh_waits']}")
    print(f"# 8 concurrent refreshes to version {v}: {calls} map_changes call, {waiters} callers waited for it")
    quiet._test_hook_before_fetch = None
    try:
        quiet.wait_for_version(MAP, v + 1000, timeout=0.3)
        fail("wait_for_version returned for a version that does not exist")
    except TimeoutError:
        pass
    quiet.close()
    ok = True
finally:
    try:
        cat.execute(f'DROP ROLE IF EXISTS "{ROLE}"')
    except psycopg.Error as e:
        print(f"# could not drop role {ROLE}: {e}", file=sys.stderr)
print("# cache_check: ok")
