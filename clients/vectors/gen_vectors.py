#!/usr/bin/python3
"""Writes routing.json from a catalog made by generate.sh: for every map (kind x key type)
its mappings, and for every test key what the server says: its hash (hashint4extended,
hashint8extended, hashtextextended(k COLLATE "C"), uuid_hash_extended, seed 0) and the row of
shardctl.route(map, key) (shard, status, is_point, low, high). Keys that route() refuses are
listed with their SQLSTATE. One JSON object per line, so a diff shows which vector changed.

    gen_vectors.py CATALOG_DSN OUT
"""
import json
import random
import sys

import psycopg

KEY_TYPES = ["int", "bigint", "text", "uuid"]
KINDS = ["list", "range", "hash"]

# The maps generate.sh made (names kind_keytype), mappings as they are created there.
I32, I64 = 2**31, 2**63


def keys_for(key_type):
    rnd = random.Random(f"shardctl-vectors-{key_type}")  # deterministic
    if key_type in ("int", "bigint"):
        ks = ["-2147483648", "-2147483647", "-1001", "-1000", "-999", "-2", "-1", "0", "-0", "007", "1", "2",
              "7", "42", "999", "1000", "1001", "4999", "5000", "5999", "6000", "65535", "65536",
              "2147483646", "2147483647"]
        lo, hi = -I32, I32 - 1
        if key_type == "bigint":
            ks += ["-9223372036854775808", "-9223372036854775807", "-4611686018427387904", "-4294967297",
                   "-4294967296", "-2147483649", "2147483648", "4294967295", "4294967296",
                   "4611686018427387904", "9223372036854775806", "9223372036854775807"]
            lo, hi = -I64, I64 - 1
        ks += [str(rnd.randint(lo, hi)) for _ in range(40)]
        ks += [str(rnd.randint(-3000, 7000)) for _ in range(20)]
    elif key_type == "text":
        ks = ["", " ", "!", "0", "A", "B", "Z", "a", "ab", "acme", "m", "ma", "mz", "n", "z", "zz", "~",
              "\u007f", "\u0080", "é", "e\u0301", "ÿ", "Ā", "Ω", "日", "日本", "本", "🙂", "𝄞", "\ufffd", "\uffff",
              "two words", "a\tb", "a\nb", "a..b", "..", "'quote", 'dq"', "back\\slash", "x" * 100,
              "ab" * 6, "abc" * 4, "a" * 11, "a" * 12, "a" * 13]
        ks += ["0123456789abcdefghijklmnopqrstuvwxy"[:n] for n in range(36)]  # every tail length of lookup3, 3 blocks
        alphabet = "abcmnzAZ09 -_.éü日本🙂Ωж"
        ks += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30))) for _ in range(50)]
    else:
        ks = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
              "3fffffff-ffff-ffff-ffff-ffffffffffff", "40000000-0000-0000-0000-000000000000",
              "7fffffff-ffff-ffff-ffff-ffffffffffff", "80000000-0000-0000-0000-000000000000",
              "c0000000-0000-0000-0000-000000000000", "cfffffff-ffff-ffff-ffff-ffffffffffff",
              "d0000000-0000-0000-0000-000000000000",
              "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
              "a0eebc999c0b4ef8bb6d6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
              "{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
              "{A0EE-BC99-9C0B-4EF8-BB6D-6BB9-BD38-0A11}", "a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11"]
        for _ in range(40):
            h = "%032x" % rnd.getrandbits(128)
            ks.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    seen, out = set(), []
    for k in ks:
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


INVALID = {
    "int": ["", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "--1", "-", "1_000", "\uff11", "\u0661",
            "2147483648", "-2147483649", "9223372036854775808", "abc"],
    "bigint": ["", "+0", " 0", "0 ", "1.5", "9223372036854775808", "-9223372036854775809",
               "99999999999999999999999", "\uff10", "0x1"],
    "uuid": ["", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
             "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
             "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
             " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
             "a0eebc999c0b4ef8bb6d6bb9bd380a1122", "(a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11)"],
}

HASH_SQL = {"int": "hashint4extended(%s::int4, 0)", "bigint": "hashint8extended(%s::int8, 0)",
            "text": 'hashtextextended(%s::text COLLATE "C", 0)', "uuid": "uuid_hash_extended(%s::uuid, 0)"}


def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def main():
    dsn, out = sys.argv[1], sys.argv[2]
    conn = psycopg.connect(dsn, autocommit=True)
    maps, vectors, invalid = [], [], []
    for kt in KEY_TYPES:
        for kind in KINDS:
            name = f"{kind}_{kt}"
            rows = conn.execute("SELECT kind, key_type, shard, status, is_point, low, high FROM shardctl.map_snapshot(%s)"
                                " ORDER BY is_point DESC, low IS NOT NULL, low COLLATE \"C\"", (name,)).fetchall()
            assert rows and rows[0][0] == kind and rows[0][1] == kt, (name, rows[:1])
            # Bounds in the route space's order (ints and hashes numerically).
            if kind == "hash" or kt in ("int", "bigint"):
                rows.sort(key=lambda r: (not r[4], -2**64 if r[5] is None else int(r[5])))
            maps.append({"map": name, "kind": kind, "key_type": kt,
                         "mappings": [{"shard": r[2], "is_point": r[4], "low": r[5], "high": r[6]} for r in rows]})
            for k in keys_for(kt):
                h, = conn.execute("SELECT " + HASH_SQL[kt], (k,)).fetchone()
                shard, status, is_point, low, high, rhash = conn.execute(
                    "SELECT shard, status, is_point, low, high, hash FROM shardctl.route(%s, %s::text)", (name, k)).fetchone()
                if kind == "hash":
                    assert rhash == h, (name, k, rhash, h)
                else:
                    assert rhash is None, (name, k, rhash)
                vectors.append({"map": name, "kind": kind, "key_type": kt, "key": k, "hash": h, "shard": shard,
                                "status": status, "is_point": is_point, "low": low, "high": high})
    for kt, ks in INVALID.items():
        for k in ks:
            try:
                conn.execute("SELECT * FROM shardctl.route(%s, %s::text)", (f"range_{kt}", k))
                state = "00000"
            except psycopg.Error as e:
                state = e.sqlstate
            invalid.append({"key_type": kt, "key": k, "sqlstate": state})
    with open(out, "w", encoding="utf-8") as f:
        f.write("{\n")
        f.write('"about": "routing test vectors produced by the server (clients/vectors/generate.sh): hash = the '
                'server\'s extended hash of the key, seed 0; shard/status/is_point/low/high = shardctl.route(map, '
                'key); invalid = keys route() refuses, with the SQLSTATE",\n')
        f.write('"maps": [\n' + ",\n".join(line(m) for m in maps) + "\n],\n")
        f.write('"vectors": [\n' + ",\n".join(line(v) for v in vectors) + "\n],\n")
        f.write('"invalid": [\n' + ",\n".join(line(v) for v in invalid) + "\n]\n")
        f.write("}\n")
    print(f"{len(maps)} maps, {len(vectors)} vectors, {len(invalid)} invalid keys -> {out}")


if __name__ == "__main__":
    main()
