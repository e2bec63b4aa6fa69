"""Router.run's retry rules, with the shard simulated: which refusals are retried and how,
what raises at once, and that a refusal is never counted as a success."""
import contextlib
import json
import unittest

import psycopg

from shardctl_routing import AmbiguousCommit, Refusal, Router
from shardctl_routing.mapcache import Route


class FakeCache:
    def __init__(self):
        self.v = 10
        self.refreshes = []
        self.waits = []

    def route(self, m, key):
        return Route(m, self.v, f"shard_{self.v}", f"dsn_{self.v}", "online", False, None, None, None, 1)

    def version(self, m):
        return self.v

    def refresh(self, m, min_version=None):
        self.refreshes.append(min_version)
        if min_version is not None and min_version <= self.v + 5:
            self.v = max(self.v, min_version)

    def wait_for_change(self, m, version, timeout):
        self.waits.append(timeout)
        return False


def refusal(kind, route, **detail):
    d = {"state": kind, "map": route.map, "min_version": None}
    d.update(detail)
    return Refusal(kind, "shardctl_" + kind, "55000", json.loads(json.dumps(d)), "refused", route=route)


class ScriptedRouter(Router):
    """Each attempt takes the next outcome: an exception to raise, or None to run fn."""

    def __init__(self, cache, script, **kw):
        super().__init__(cache, **kw)
        self.script = list(script)
        self.routes = []

    @contextlib.contextmanager
    def _attempt(self, r):
        self.routes.append(r)
        step = self.script.pop(0)
        if callable(step):
            raise step(r)
        yield "conn"


class RunRetries(unittest.TestCase):
    def test_stale_route_refreshes_to_min_version(self):
        c = FakeCache()
        r = ScriptedRouter(c, [lambda rt: refusal("stale_route", rt, min_version=13), None])
        out = r.run_ex("m", 1, lambda conn: "done")
        self.assertEqual((out.value, out.attempts, out.route.version), ("done", 2, 13))
        self.assertEqual(c.refreshes, [13])
        self.assertEqual([x.kind for x in out.refusals], ["stale_route"])

    def test_fenced_without_min_version_wants_a_newer_map(self):
        c = FakeCache()
        r = ScriptedRouter(c, [lambda rt: refusal("fenced", rt, new_owner="shard_11"), None])
        out = r.run_ex("m", 1, lambda conn: 1)
        self.assertEqual(c.refreshes, [11])
        self.assertEqual(out.route.shard, "shard_11")

    def test_moving_backs_off_without_refreshing(self):
        c = FakeCache()
        r = ScriptedRouter(c, [lambda rt: refusal("moving", rt)] * 3 + [None], backoff=0.01, backoff_max=0.02)
        out = r.run_ex("m", 1, lambda conn: 1)
        self.assertEqual(out.attempts, 4)
        self.assertEqual(c.refreshes, [])
        self.assertEqual(len(c.waits), 3)
        self.assertTrue(all(0.005 <= w <= 0.03 for w in c.waits), c.waits)

    def test_gives_up_with_the_refusal(self):
        c = FakeCache()
        r = ScriptedRouter(c, [lambda rt: refusal("moving", rt)] * 3, backoff=0.001)
        with self.assertRaises(Refusal) as e:
            r.run_ex("m", 1, lambda conn: 1, max_attempts=3)
        self.assertEqual(e.exception.kind, "moving")

    def test_other_errors_raise_at_once(self):
        c = FakeCache()
        r = ScriptedRouter(c, [lambda rt: psycopg.errors.UniqueViolation("dup"), None])
        with self.assertRaises(psycopg.errors.UniqueViolation):
            r.run_ex("m", 1, lambda conn: 1)
        self.assertEqual(len(r.script), 1)

    def test_ambiguous_commit_is_the_callers_choice(self):
        c = FakeCache()
        amb = lambda rt: AmbiguousCommit(rt, OSError("lost"))  # noqa: E731
        with self.assertRaises(AmbiguousCommit):
            ScriptedRouter(c, [amb, None]).run_ex("m", 1, lambda conn: 1)
        out = ScriptedRouter(c, [amb, None]).run_ex("m", 1, lambda conn: 1, retry_ambiguous_commit=True)
        self.assertEqual(out.attempts, 2)


class RefusalFromARealError(unittest.TestCase):
    def test_diag_of_a_server_error(self):
        # What the shard sends, as psycopg parses it (a result made by libpq itself is not
        # available without a server; the classification reads only sqlstate and diag).
        class Diag:
            constraint_name = "shardctl_fenced"
            message_detail = '{"state": "fenced", "new_owner": "shard_3", "min_version": 18}'
            message_primary = "key 42 has moved"
            message_hint = "reload the map"

        class E(psycopg.errors.ObjectNotInPrerequisiteState):
            sqlstate = "55000"
            diag = Diag()

        ref = Refusal.from_error(E("x"))
        self.assertEqual((ref.kind, ref.new_owner, ref.min_version, ref.hint), ("fenced", "shard_3", 18, "reload the map"))


if __name__ == "__main__":
    unittest.main()
