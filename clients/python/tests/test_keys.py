"""Key parsing against `shardctl lookup`'s rules, as the server applies them in route()."""
import unittest
import uuid

from shardctl_routing.keys import InvalidKey, parse_key

from . import vectors


class KeysVsServer(unittest.TestCase):
    def test_keys_the_server_routes_parse(self):
        for v in vectors.load()["vectors"]:
            parse_key(v["key_type"], v["key"])  # raises on a mismatch

    def test_keys_the_server_refuses_do_not(self):
        data = vectors.load()["invalid"]
        self.assertGreaterEqual(len(data), 30)
        for v in data:
            if v["sqlstate"] == "22P02":
                with self.assertRaises(InvalidKey, msg=f"{v['key_type']} {v['key']!r}"):
                    parse_key(v["key_type"], v["key"])
            else:
                self.assertEqual(v["sqlstate"], "00000", v)
                parse_key(v["key_type"], v["key"])

    def test_ints(self):
        self.assertEqual(parse_key("int", "-0"), 0)
        self.assertEqual(parse_key("int", "007"), 7)
        self.assertEqual(parse_key("int", 2**31 - 1), 2**31 - 1)
        self.assertEqual(parse_key("bigint", "-9223372036854775808"), -2**63)
        for bad in (True, 1.0, "1\n", "\n1", 2**31):
            with self.assertRaises(InvalidKey, msg=repr(bad)):
                parse_key("int", bad)
        with self.assertRaises(InvalidKey):
            parse_key("bigint", 2**63)
        with self.assertRaises(TypeError):
            parse_key("bigint", None)

    def test_text(self):
        self.assertEqual(parse_key("text", ""), "")
        self.assertEqual(parse_key("text", "日本".encode()), "日本")
        for bad in ("a\0b", "\ud800", b"\xff", 5):
            with self.assertRaises(InvalidKey, msg=repr(bad)):
                parse_key("text", bad)

    def test_uuid_forms(self):
        want = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        for form in ("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                     "a0eebc999c0b4ef8bb6d6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
                     "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", want):
            self.assertEqual(parse_key("uuid", form), want)
        # Python's uuid.UUID() takes these; PostgreSQL (and lookup) do not.
        for bad in ("urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1\u0661"):
            with self.assertRaises(InvalidKey, msg=bad):
                parse_key("uuid", bad)


if __name__ == "__main__":
    unittest.main()
