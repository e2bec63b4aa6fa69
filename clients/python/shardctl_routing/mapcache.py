"""The shard map, cached in the application and kept current.

MapCache loads ``shardctl.map_snapshot(map)`` once, routes keys locally, and applies
``shardctl.map_changes(map, since)`` ('upsert' / 'delete' / 'reload') whenever it learns the
map changed: a NOTIFY on channel ``shardctl_map_changed`` (payload ``MAP:VERSION``) heard on a
direct catalog connection by a background thread, a refusal from a shard (the router asks for
at least the version the shard named), or, while that connection is lost, a poll every
``poll_interval`` seconds. A notice is only a wake-up: map_changes is the truth.

Exactly one refresh per map is in flight at a time; callers that need one while it runs wait
for it and use its result.
"""
import bisect
import select
import threading
import time
from typing import NamedTuple, Optional

import psycopg
from psycopg_pool import ConnectionPool

from . import keys as _keys

CHANNEL = "shardctl_map_changed"


class Mapping(NamedTuple):
    mapping_id: int
    shard: str
    dsn: str
    shard_status: Optional[str]
    status: str
    is_point: bool
    low: Optional[str]
    high: Optional[str]


class Route(NamedTuple):
    """Where a key goes, by the map at ``version`` (fields as ``shardctl.route()`` names them)."""

    map: str
    version: int
    shard: Optional[str]
    dsn: Optional[str]
    status: str  # 'online' | 'offline' | 'unmapped'
    is_point: Optional[bool]
    low: Optional[str]
    high: Optional[str]
    hash: Optional[int]
    mapping_id: Optional[int]

    @property
    def route_setting(self):
        return f"{self.map}:{self.version}"


class MapState:
    """One version of one map, immutable once built (readers never lock)."""

    def __init__(self, name, version, kind, key_type, mappings):
        self.name = name
        self.version = version
        self.kind = kind
        self.key_type = key_type
        self.mappings = dict(mappings)  # mapping_id -> Mapping
        self._points = {}
        ranges = []
        for m in self.mappings.values():
            if m.is_point:
                self._points[_keys.bound_value(kind, key_type, m.low)] = m
            else:
                low = _keys.bound_value(kind, key_type, m.low)
                if low is None:
                    low = _keys.min_route_value(kind, key_type)
                ranges.append((low, _keys.bound_value(kind, key_type, m.high), m))
        ranges.sort(key=lambda r: r[0])
        self._lows = [r[0] for r in ranges]
        self._ranges = ranges

    def find(self, value):
        m = self._points.get(value)
        if m is not None:
            return m
        i = bisect.bisect_right(self._lows, value) - 1
        if i >= 0:
            low, high, m = self._ranges[i]
            if high is None or value < high:
                return m
        return None

    def route(self, key):
        k = _keys.parse_key(self.key_type, key)
        value, h = _keys.route_value(self.kind, self.key_type, k)
        m = self.find(value)
        if m is None:
            return Route(self.name, self.version, None, None, "unmapped", None, None, None, h, None)
        return Route(self.name, self.version, m.shard, m.dsn, m.status, m.is_point, m.low, m.high, h, m.mapping_id)


def apply_changes(st, rows):
    """The state after map_changes' rows (version, change, mapping_id, shard, dsn, shard_status,
    status, is_point, low, high) for a map at st; None when they say 'reload' (take a new
    snapshot). No rows: nothing changed, st itself."""
    if not rows:
        return st
    if any(r[1] == "reload" for r in rows):
        return None
    mappings = dict(st.mappings)
    for version, change, mid, shard, dsn, sst, status, is_point, low, high in rows:
        if change == "delete":
            mappings.pop(mid, None)
        elif change == "upsert":
            mappings[mid] = Mapping(mid, shard, dsn, sst, status, is_point, low, high)
        else:
            raise ValueError(f"map_changes: unknown change {change!r}")
    return MapState(st.name, rows[0][0], st.kind, st.key_type, mappings)


def state_from_snapshot(name, rows):
    """A MapState from map_snapshot's rows (version, kind, key_type, mapping_id, shard, dsn,
    shard_status, status, is_point, low, high)."""
    version, kind, key_type = rows[0][0], rows[0][1], rows[0][2]
    mappings = {r[3]: Mapping(r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10]) for r in rows if r[3] is not None}
    return MapState(name, version, kind, key_type, mappings)


class _Slot:
    """Per map: the current state, and the machinery of its single refresh in flight."""

    def __init__(self):
        self.state: Optional[MapState] = None
        self.lock = threading.Lock()        # held by the one refresh in flight
        self.generation = 0                 # bumped by every completed refresh
        self.changed = threading.Condition(threading.Lock())


class MapCache:
    """
    cache = MapCache("host=... dbname=catalog", poll_interval=5.0)
    route = cache.route("customers", 42)        # loads the map on first use
    cache.wait_for_version("customers", 17, timeout=5)
    cache.close()

    catalog_dsn: a direct connection to the catalog (NOTIFY does not pass PgBouncer's
    transaction pooling). listen=False: no background thread (refreshes happen only when asked
    for, or by poll()).
    """

    def __init__(self, catalog_dsn, *, poll_interval=5.0, listen=True, maps=(), pool_size=2, listen_dsn=None):
        self.catalog_dsn = catalog_dsn
        self.listen_dsn = listen_dsn or catalog_dsn
        self.poll_interval = poll_interval
        self._slots = {}
        self._slots_lock = threading.Lock()
        self._stop = threading.Event()
        self._pool = ConnectionPool(catalog_dsn, min_size=1, max_size=pool_size,
                                    kwargs={"autocommit": True, "prepare_threshold": None},
                                    name="shardctl-catalog")
        self._stats_lock = threading.Lock()
        self.stats = {"snapshots": 0, "map_changes_calls": 0, "refresh_waits": 0, "notices": 0,
                      "listen_connects": 0, "listen_losses": 0, "polls": 0}
        self.notice_latencies = []   # seconds from a notice read to the cache holding its version
        self._listener_connected = threading.Event()
        self._listen_pid = None
        self._test_hook_before_fetch = None
        for m in maps:
            self.get(m)
        self._thread = None
        if listen:
            self._thread = threading.Thread(target=self._listen_loop, name="shardctl-map-listener", daemon=True)
            self._thread.start()

    # -- public ---------------------------------------------------------------------------------

    def get(self, name) -> MapState:
        """The map's current cached state, loading it on first use."""
        slot = self._slot(name)
        st = slot.state
        if st is None:
            self.refresh(name)
            st = slot.state
        return st

    def route(self, name, key) -> Route:
        return self.get(name).route(key)

    def version(self, name):
        st = self._slot(name).state
        return None if st is None else st.version

    def maps(self):
        with self._slots_lock:
            return [n for n, s in self._slots.items() if s.state is not None]

    def refresh(self, name, min_version=None):
        """Brings the map up to date (at least to min_version when the catalog has it). If a
        refresh of this map is already in flight, waits for it instead of starting another, and
        starts one of its own only if that one did not reach min_version."""
        slot = self._slot(name)
        st = slot.state
        if st is not None and min_version is not None and st.version >= min_version:
            return st
        gen = slot.generation
        if not slot.lock.acquire(blocking=False):
            self._count("refresh_waits")
            slot.lock.acquire()
        try:
            st = slot.state
            if st is not None and slot.generation != gen and (min_version is None or st.version >= min_version):
                return st  # the refresh we waited for is ours too
            if st is not None and min_version is not None and st.version >= min_version:
                return st
            if self._test_hook_before_fetch is not None:
                self._test_hook_before_fetch(name)
            new = self._fetch(name, st)
            with slot.changed:
                slot.state = new
                slot.generation += 1
                slot.changed.notify_all()
            return new
        finally:
            slot.lock.release()

    def wait_for_version(self, name, version, timeout=10.0, ask=True):
        """Returns the map's state once the cache holds ``version`` or newer; raises TimeoutError
        after ``timeout`` seconds. Relies on notices, and asks the catalog itself between them
        (every 50 ms at first, backing off to the poll interval); ask=False only waits (for the
        background thread's notices and polls)."""
        deadline = time.monotonic() + timeout
        slot = self._slot(name)
        if slot.state is None:
            self.refresh(name)
        pause = 0.05
        while True:
            st = slot.state
            if st is not None and st.version >= version:
                return st
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"map {name}: version {version} not reached in {timeout} s "
                                   f"(cached: {st.version if st else None})")
            with slot.changed:
                if slot.state is None or slot.state.version < version:
                    slot.changed.wait(min(left, pause))
            st = slot.state
            if ask and (st is None or st.version < version):
                self.refresh(name, min_version=version)
                pause = min(pause * 2, self.poll_interval)

    def wait_for_change(self, name, version, timeout):
        """Waits up to timeout seconds for the cache to hold a version of the map newer than
        ``version`` (a notice, a poll or another thread's refresh brings it); never asks the
        catalog itself. Returns True when it does."""
        slot = self._slot(name)
        deadline = time.monotonic() + timeout
        with slot.changed:
            while slot.state is None or slot.state.version <= version:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                slot.changed.wait(left)
        return True

    def poll(self):
        """Refreshes every loaded map once (what the background thread does while it cannot
        listen, and once after each LISTEN); stats['polls'] counts the polls completed."""
        for name in self.maps():
            try:
                self.refresh(name)
            except psycopg.Error:
                pass
        self._count("polls")

    def listening(self, timeout=None):
        """True once the background thread listens (waits up to timeout seconds)."""
        return self._listener_connected.wait(timeout)

    @property
    def listen_backend_pid(self):
        """The catalog backend of the listening connection (None when not connected)."""
        return self._listen_pid

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _count(self, what, n=1):
        with self._stats_lock:
            self.stats[what] += n

    def _slot(self, name):
        slot = self._slots.get(name)
        if slot is None:
            with self._slots_lock:
                slot = self._slots.setdefault(name, _Slot())
        return slot

    def _fetch(self, name, st):
        with self._pool.connection() as conn:
            if st is not None:
                self._count("map_changes_calls")
                rows = conn.execute(
                    "SELECT version, change, mapping_id, shard, dsn, shard_status, status, is_point, low, high"
                    " FROM shardctl.map_changes(%s, %s)", (name, st.version)).fetchall()
                new = apply_changes(st, rows)
                if new is not None:
                    return new
            self._count("snapshots")
            rows = conn.execute(
                "SELECT version, kind, key_type, mapping_id, shard, dsn, shard_status, status, is_point, low, high"
                " FROM shardctl.map_snapshot(%s)", (name,)).fetchall()
        return state_from_snapshot(name, rows)

    def _on_notice(self, payload, t_read):
        self._count("notices")
        name, _, v = payload.rpartition(":")
        try:
            version = int(v)
        except ValueError:
            return
        slot = self._slots.get(name)
        if slot is None or slot.state is None or slot.state.version >= version:
            return
        try:
            self.refresh(name, min_version=version)
        except psycopg.Error:
            return  # the next poll or refusal catches up
        st = slot.state
        if st is not None and st.version >= version:
            with self._stats_lock:
                self.notice_latencies.append(time.monotonic() - t_read)

    def _listen_loop(self):
        while not self._stop.is_set():
            conn = None
            try:
                conn = psycopg.connect(self.listen_dsn, autocommit=True, connect_timeout=5)
                conn.execute(f"LISTEN {CHANNEL}")
                self._listen_pid = conn.info.backend_pid
                self._count("listen_connects")
                # Whatever changed while we were not listening.
                self.poll()
                self._listener_connected.set()
                pg = conn.pgconn
                fd = conn.fileno()
                while not self._stop.is_set():
                    ready, _, _ = select.select([fd], [], [], 0.5)
                    if not ready:
                        continue
                    pg.consume_input()
                    if pg.status != psycopg.pq.ConnStatus.OK:
                        raise psycopg.OperationalError("listening connection lost")
                    t_read = time.monotonic()
                    while True:
                        n = pg.notifies()
                        if n is None:
                            break
                        if n.relname.decode() == CHANNEL:
                            self._on_notice(n.extra.decode(), t_read)
            except Exception:
                if self._stop.is_set():
                    break
                self._count("listen_losses")
            finally:
                self._listener_connected.clear()
                self._listen_pid = None
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:
                        pass
            # Lost: poll now and every poll_interval until the connection comes back.
            while not self._stop.is_set():
                self.poll()
                if self._stop.wait(self.poll_interval):
                    break
                try:
                    probe = psycopg.connect(self.listen_dsn, autocommit=True, connect_timeout=5)
                    probe.close()
                    break
                except psycopg.Error:
                    continue
