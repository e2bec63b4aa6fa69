"""Transactions on the shard a key routes to, stating the map version they routed by.

    with Router(cache) as router:
        with router.transaction("customers", 42) as conn:       # one attempt, no retry
            conn.execute("INSERT INTO orders ...")
        router.run("customers", 42, lambda conn: conn.execute(...))   # with retries

Every transaction begins with ``SET LOCAL shardctl.route = 'MAP:VERSION'``
(transaction-scoped: safe behind PgBouncer's transaction pooling, where a session-level SET
would leak to the next client of the server connection).
"""
import json
import random
import re
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg
from psycopg_pool import ConnectionPool

from .mapcache import MapCache, Route

_MAP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,62}")

# Refusals of the routing contract: SQLSTATE 55000 and one of these constraint names.
REFUSAL_KINDS = {"shardctl_moving": "moving", "shardctl_fenced": "fenced", "shardctl_stale_route": "stale_route"}


class Unmapped(LookupError):
    """The map routes the key nowhere (no mapping covers it)."""

    def __init__(self, route: Route):
        super().__init__(f"map {route.map} (version {route.version}) has no mapping for the key")
        self.route = route


class Refusal(Exception):
    """A shard refused the transaction under the routing contract.

    kind: 'moving' (retry in a moment), 'fenced' (the key moved away: reload the map, go to the
    new owner) or 'stale_route' (reload the map to at least min_version, re-route, retry);
    constraint: the constraint name; sqlstate: '55000'; detail: the JSON DETAIL as a dict
    (state, map, map_id, operation, new_owner, min_version, stated_version, key, table);
    route: the Route the refused attempt used. Raised by Router.run when it gives up, and by
    Router.transaction (which never retries).
    """

    def __init__(self, kind, constraint, sqlstate, detail, message, hint=None, route=None, cause=None):
        super().__init__(message)
        self.kind = kind
        self.constraint = constraint
        self.sqlstate = sqlstate
        self.detail = detail
        self.message = message
        self.hint = hint
        self.route = route
        self.cause = cause

    @property
    def min_version(self):
        v = self.detail.get("min_version")
        return int(v) if v is not None else None

    @property
    def new_owner(self):
        return self.detail.get("new_owner")

    @classmethod
    def from_error(cls, err, route=None):
        """The Refusal a psycopg error is, or None when it is not one (anything else)."""
        diag = getattr(err, "diag", None)
        if diag is None or getattr(err, "sqlstate", None) != "55000":
            return None
        kind = REFUSAL_KINDS.get(diag.constraint_name)
        if kind is None:
            return None
        try:
            detail = json.loads(diag.message_detail) if diag.message_detail else {}
            if not isinstance(detail, dict):
                detail = {"raw": diag.message_detail}
        except ValueError:
            detail = {"raw": diag.message_detail}
        return cls(kind, diag.constraint_name, "55000", detail, diag.message_primary or str(err),
                   diag.message_hint, route, err)


class AmbiguousCommit(Exception):
    """The connection was lost while COMMIT was in flight: the transaction may or may not have
    committed. Router.run does not retry it unless told to (retry_ambiguous_commit=True): only
    the caller knows whether running fn twice is harmless (idempotent writes) or not."""

    def __init__(self, route, cause):
        super().__init__(f"connection lost during COMMIT on shard {route.shard}: outcome unknown")
        self.route = route
        self.cause = cause


class ConnectionLost(psycopg.OperationalError):
    """The connection was lost before COMMIT was sent: the server rolled the transaction back."""

    def __init__(self, route, cause):
        super().__init__(f"connection to shard {route.shard} lost before COMMIT: {cause}")
        self.route = route
        self.cause = cause


@dataclass
class Outcome:
    value: object
    route: Route
    attempts: int
    refusals: list = field(default_factory=list)


class Router:
    """One psycopg_pool.ConnectionPool per shard DSN (the map's ``dsn`` column: the shard's
    app_dsn, or its dsn), with prepare_threshold=None (no named prepared statements: PgBouncer
    1.18 in transaction mode does not carry them between transactions)."""

    def __init__(self, cache: MapCache, *, pool_min=1, pool_max=4, pool_timeout=30.0, max_attempts=20,
                 backoff=0.05, backoff_max=1.0, connect_kwargs=None):
        self.cache = cache
        self.pool_min = pool_min
        self.pool_max = pool_max
        self.pool_timeout = pool_timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.connect_kwargs = dict(connect_kwargs or {})
        self._pools = {}
        self._lock = threading.Lock()
        self.refusals = Counter()   # by constraint name, every refusal seen (retried or not)

    # -- pools ----------------------------------------------------------------------------------

    def pool(self, dsn) -> ConnectionPool:
        p = self._pools.get(dsn)
        if p is None:
            with self._lock:
                p = self._pools.get(dsn)
                if p is None:
                    kw = {"autocommit": True, "prepare_threshold": None}
                    kw.update(self.connect_kwargs)
                    p = ConnectionPool(dsn, min_size=self.pool_min, max_size=self.pool_max,
                                       timeout=self.pool_timeout, kwargs=kw, name="shardctl-shard")
                    self._pools[dsn] = p
        return p

    def close(self):
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for p in pools:
            p.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- one attempt ----------------------------------------------------------------------------

    def route(self, map_name, key) -> Route:
        r = self.cache.route(map_name, key)
        if r.shard is None:
            raise Unmapped(r)
        return r

    @contextmanager
    def transaction(self, map_name, key, *, route=None):
        """One transaction on the key's shard, stating the map version first; commits when the
        block ends normally, rolls back on an exception. Raises Refusal (no retry), Unmapped,
        AmbiguousCommit, or what psycopg raises."""
        r = route or self.route(map_name, key)
        with self._attempt(r) as conn:
            yield conn

    @contextmanager
    def _attempt(self, r: Route):
        if not _MAP_NAME.fullmatch(r.map):
            raise ValueError(f"map name {r.map!r} does not fit the route setting's grammar")
        with self.pool(r.dsn).connection() as conn:
            committing = False
            try:
                # One round trip for both (the value is built from a checked name and an int);
                # SET LOCAL is a utility statement, cheaper than a SELECT of set_config().
                conn.execute(f"BEGIN; SET LOCAL shardctl.route = '{r.map}:{int(r.version)}'")
                yield conn
                committing = True
                conn.execute("COMMIT")
            except psycopg.Error as e:
                if isinstance(e, psycopg.OperationalError) and conn.closed:
                    if committing:
                        raise AmbiguousCommit(r, e) from e
                    raise ConnectionLost(r, e) from e
                ref = Refusal.from_error(e, r)
                if ref is not None:
                    self.refusals[ref.constraint] += 1
                    self._rollback(conn)
                    raise ref from e
                self._rollback(conn)
                raise
            except BaseException:
                self._rollback(conn)
                raise

    @staticmethod
    def _rollback(conn):
        if conn.closed:
            return
        try:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute("ROLLBACK")
        except psycopg.Error:
            pass

    # -- with retries ---------------------------------------------------------------------------

    def run(self, map_name, key, fn, **kw):
        """fn(conn) in a transaction on the key's shard, retried on refusals; returns fn's value."""
        return self.run_ex(map_name, key, fn, **kw).value

    def run_ex(self, map_name, key, fn, *, retry_ambiguous_commit=False, max_attempts=None) -> Outcome:
        """As run, returning an Outcome: fn's value, the route it committed by, attempts and
        the refusals met. 'moving': backs off (exponential, jittered) and re-routes;
        'fenced' / 'stale_route': refreshes the map (to at least DETAIL's min_version when
        given), re-routes and retries. Backoffs end early when the map changes. A connection
        lost before COMMIT is retried (the server rolled back); one lost during COMMIT raises
        AmbiguousCommit unless retry_ambiguous_commit. Anything else raises at once; a Refusal is raised when
        max_attempts are spent."""
        limit = max_attempts or self.max_attempts
        refusals = []
        pause = self.backoff
        attempt = 0
        while True:
            attempt += 1
            r = self.route(map_name, key)
            try:
                with self._attempt(r) as conn:
                    value = fn(conn)
                return Outcome(value, r, attempt, refusals)
            except Refusal as ref:
                refusals.append(ref)
                if attempt >= limit:
                    raise
                # Back off (from `backoff`, doubling to `backoff_max`, jittered), but go on at
                # once when the map changes meanwhile: a 'moving' range ends with its flip, and a
                # fenced or stale route needs a version the catalog may not have handed out yet.
                delay = pause * (0.5 + random.random())
                if ref.kind == "moving":
                    self.cache.wait_for_change(map_name, r.version, delay)
                    pause = min(pause * 2, self.backoff_max)
                else:
                    mv = ref.min_version
                    target = max(mv if mv is not None else 0, r.version + 1)
                    self.cache.refresh(map_name, min_version=target)
                    if self.cache.version(map_name) <= r.version:
                        self.cache.wait_for_change(map_name, r.version, delay)
                        pause = min(pause * 2, self.backoff_max)
            except AmbiguousCommit:
                if not retry_ambiguous_commit or attempt >= limit:
                    raise
            except ConnectionLost:
                # Lost before COMMIT was sent: nothing committed. Another connection may do.
                if attempt >= limit:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, self.backoff_max)
