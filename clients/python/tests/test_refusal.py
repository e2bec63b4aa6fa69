"""Refusals are classified by SQLSTATE 55000 and the constraint name; their DETAIL is JSON."""
import json
import unittest

from shardctl_routing import Refusal


class Diag:
    def __init__(self, constraint, detail, message="refused", hint="HINT"):
        self.constraint_name = constraint
        self.message_detail = detail
        self.message_primary = message
        self.message_hint = hint


class Err(Exception):
    def __init__(self, sqlstate, diag):
        super().__init__(diag.message_primary)
        self.sqlstate = sqlstate
        self.diag = diag


DETAIL = {"state": "stale_route", "map": "customers", "map_id": 1, "operation": None, "new_owner": "shard_2",
          "min_version": 42, "stated_version": 40, "key": "7", "table": "public.orders"}


class Classify(unittest.TestCase):
    def test_kinds(self):
        for constraint, kind in (("shardctl_moving", "moving"), ("shardctl_fenced", "fenced"),
                                 ("shardctl_stale_route", "stale_route")):
            r = Refusal.from_error(Err("55000", Diag(constraint, json.dumps(DETAIL))))
            self.assertEqual((r.kind, r.sqlstate, r.constraint, r.detail, r.min_version, r.new_owner),
                             (kind, "55000", constraint, DETAIL, 42, "shard_2"))

    def test_not_refusals(self):
        self.assertIsNone(Refusal.from_error(Err("55000", Diag(None, None))))           # a pre-contract guard
        self.assertIsNone(Refusal.from_error(Err("55000", Diag("other_constraint", "{}"))))
        self.assertIsNone(Refusal.from_error(Err("23505", Diag("shardctl_fenced", "{}"))))
        self.assertIsNone(Refusal.from_error(Err("22023", Diag("shardctl_bad_route", "{}"))))
        self.assertIsNone(Refusal.from_error(ValueError("no diag")))

    def test_detail_not_json(self):
        r = Refusal.from_error(Err("55000", Diag("shardctl_moving", "not json")))
        self.assertEqual((r.kind, r.detail, r.min_version), ("moving", {"raw": "not json"}, None))


if __name__ == "__main__":
    unittest.main()
