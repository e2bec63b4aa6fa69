"""The hash port against the server's own values (clients/vectors/routing.json)."""
import unittest
import uuid

from shardctl_routing import pghash
from shardctl_routing.keys import hash_key, parse_key

from . import vectors


class HashVsServer(unittest.TestCase):
    def test_every_vector(self):
        data = vectors.load()
        seen = {}
        for v in data["vectors"]:
            k = parse_key(v["key_type"], v["key"])
            self.assertEqual(hash_key(v["key_type"], k), v["hash"], f"{v['key_type']} {v['key']!r}")
            seen[v["key_type"]] = seen.get(v["key_type"], 0) + 1
        self.assertEqual(sorted(seen), ["bigint", "int", "text", "uuid"])
        self.assertTrue(all(n >= 30 for n in seen.values()), seen)

    def test_the_tail_lengths_of_lookup3(self):
        # Keys of 0..35 bytes take every branch of the last-block switch after 0..2 full blocks.
        lengths = {len(v["key"].encode()) for v in vectors.load()["vectors"] if v["key_type"] == "text"}
        self.assertLessEqual(set(range(36)), lengths)

    def test_int8_folds_into_int4(self):
        for k in (0, 1, -1, 2**31 - 1, -2**31):
            self.assertEqual(pghash.hashint8extended(k), pghash.hashint4extended(k))

    def test_ranges_checked(self):
        with self.assertRaises(ValueError):
            pghash.hashint4extended(2**31)
        with self.assertRaises(ValueError):
            pghash.hashint8extended(-2**63 - 1)
        with self.assertRaises(ValueError):
            pghash.uuid_hash_extended(b"short")

    def test_uuid_object_and_bytes_agree(self):
        u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        self.assertEqual(pghash.uuid_hash_extended(u), pghash.uuid_hash_extended(u.bytes))


if __name__ == "__main__":
    unittest.main()
