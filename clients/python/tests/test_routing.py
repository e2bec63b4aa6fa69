"""Local routing (MapState) against shardctl.route() for every vector, and the cache's
application of map_changes rows."""
import unittest

from shardctl_routing.mapcache import MapState, Mapping, apply_changes, state_from_snapshot

from . import vectors


def states():
    out = {}
    for m in vectors.load()["maps"]:
        mappings = {i: Mapping(i, x["shard"], "dbname=" + x["shard"], "active", "online", x["is_point"], x["low"], x["high"])
                    for i, x in enumerate(m["mappings"], 1)}
        out[m["map"]] = MapState(m["map"], 1, m["kind"], m["key_type"], mappings)
    return out


class RoutingVsServer(unittest.TestCase):
    def test_every_vector(self):
        st = states()
        self.assertEqual(len(st), 12)
        n = {"unmapped": 0, "point": 0, "range": 0}
        for v in vectors.load()["vectors"]:
            r = st[v["map"]].route(v["key"])
            got = (r.shard, r.status, r.is_point, r.low, r.high, r.hash)
            want = (v["shard"], v["status"], v["is_point"], v["low"], v["high"], v["hash"] if v["kind"] == "hash" else None)
            self.assertEqual(got, want, f"{v['map']} {v['key']!r}")
            n["unmapped" if r.shard is None else "point" if r.is_point else "range"] += 1
        # The vectors exercise each outcome.
        self.assertTrue(all(c >= 10 for c in n.values()), n)


def snap(rows, version=5, kind="range", key_type="bigint"):
    return [(version, kind, key_type) + r for r in rows]


class ApplyChanges(unittest.TestCase):
    def setUp(self):
        self.st = state_from_snapshot("m", snap([
            (1, "a", "dsn_a", "active", "online", False, None, "100"),
            (2, "b", "dsn_b", "active", "online", False, "100", "200"),
            (3, "c", "dsn_c", "active", "online", False, "200", None)]))

    def test_snapshot(self):
        self.assertEqual(self.st.version, 5)
        self.assertEqual([self.st.route(k).shard for k in (-2**63, 99, 100, 199, 200, 2**63 - 1)],
                         ["a", "a", "b", "b", "c", "c"])

    def test_empty_map(self):
        st = state_from_snapshot("e", [(1, "range", "int", None, None, None, None, None, None, None, None)])
        self.assertEqual(st.route(5).status, "unmapped")

    def test_nothing_changed(self):
        self.assertIs(apply_changes(self.st, []), self.st)

    def test_reload(self):
        self.assertIsNone(apply_changes(self.st, [(9, "reload") + (None,) * 8]))

    def test_split_as_changes(self):
        # A split of 100..200 at 150: mapping 2 shrinks, mapping 4 is new (on shard d, offline).
        new = apply_changes(self.st, [
            (7, "upsert", 2, "b", "dsn_b", "active", "online", False, "100", "150"),
            (7, "upsert", 4, "d", "dsn_d", "active", "offline", False, "150", "200")])
        self.assertEqual(new.version, 7)
        r = new.route(160)
        self.assertEqual((r.shard, r.dsn, r.status, r.low, r.high, r.version), ("d", "dsn_d", "offline", "150", "200", 7))
        self.assertEqual(new.route(149).shard, "b")
        # The old state is untouched (readers holding it keep a consistent map).
        self.assertEqual((self.st.route(160).shard, self.st.version), ("b", 5))

    def test_merge_as_changes(self):
        new = apply_changes(self.st, [
            (6, "delete", 3, None, None, None, None, None, None, None),
            (6, "upsert", 2, "b", "dsn_b", "active", "online", False, "100", None)])
        self.assertEqual([new.route(k).shard for k in (5, 150, 10**12)], ["a", "b", "b"])
        self.assertNotIn(3, new.mappings)

    def test_unknown_change(self):
        with self.assertRaises(ValueError):
            apply_changes(self.st, [(6, "frobnicate", 3) + (None,) * 7])


if __name__ == "__main__":
    unittest.main()
