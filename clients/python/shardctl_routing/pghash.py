"""PostgreSQL's extended hash functions, seed 0, ported to Python bit for bit.

PostgreSQL hashes with Bob Jenkins' lookup3 (src/common/hashfn.c, hash_bytes_extended and
hash_bytes_uint32_extended). The guards and ``shardctl.route()`` use, for hash maps:

  int     hashint4extended(k, 0)
  bigint  hashint8extended(k, 0)       (folds the high half into the low one)
  text    hashtextextended(k COLLATE "C", 0)   (the key's UTF-8 bytes)
  uuid    uuid_hash_extended(k, 0)     (the 16 bytes)

Every function returns the server's value: a signed 64-bit integer. Bytes are read in
little-endian order, as a little-endian server reads them (x86-64, arm64); the committed test
vectors (clients/vectors/routing.json, produced by the server) are the proof.
"""

_M = 0xFFFFFFFF


def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & _M


def _mix(a, b, c):
    a = (a - c) & _M; a ^= _rot(c, 4);  c = (c + b) & _M
    b = (b - a) & _M; b ^= _rot(a, 6);  a = (a + c) & _M
    c = (c - b) & _M; c ^= _rot(b, 8);  b = (b + a) & _M
    a = (a - c) & _M; a ^= _rot(c, 16); c = (c + b) & _M
    b = (b - a) & _M; b ^= _rot(a, 19); a = (a + c) & _M
    c = (c - b) & _M; c ^= _rot(b, 4);  b = (b + a) & _M
    return a, b, c


def _final(a, b, c):
    c ^= b; c = (c - _rot(b, 14)) & _M
    a ^= c; a = (a - _rot(c, 11)) & _M
    b ^= a; b = (b - _rot(a, 25)) & _M
    c ^= b; c = (c - _rot(b, 16)) & _M
    a ^= c; a = (a - _rot(c, 4)) & _M
    b ^= a; b = (b - _rot(a, 14)) & _M
    c ^= b; c = (c - _rot(b, 24)) & _M
    return a, b, c


def _signed64(b, c):
    v = (b << 32) | c
    return v - (1 << 64) if v >= (1 << 63) else v


def _seed(a, b, c, seed):
    if seed:
        a = (a + (seed >> 32)) & _M
        b = (b + (seed & _M)) & _M
        a, b, c = _mix(a, b, c)
    return a, b, c


def hash_bytes_extended(data: bytes, seed: int = 0) -> int:
    """hash_bytes_extended(k, keylen, seed) as a signed 64-bit integer."""
    n = len(data)
    a = b = c = (0x9E3779B9 + n + 3923095) & _M
    a, b, c = _seed(a, b, c, seed & 0xFFFFFFFFFFFFFFFF)
    i = 0
    frm = int.from_bytes
    while n - i >= 12:
        a = (a + frm(data[i:i + 4], "little")) & _M
        b = (b + frm(data[i + 4:i + 8], "little")) & _M
        c = (c + frm(data[i + 8:i + 12], "little")) & _M
        a, b, c = _mix(a, b, c)
        i += 12
    rest = data[i:]
    r = len(rest)
    # The last 11 bytes; the lowest byte of c is reserved for the length.
    if r >= 9:
        c = (c + (frm(rest[8:11], "little") << 8)) & _M
    if r >= 5:
        b = (b + frm(rest[4:8], "little")) & _M
    if r >= 1:
        a = (a + frm(rest[0:4], "little")) & _M
    a, b, c = _final(a, b, c)
    return _signed64(b, c)


def hash_uint32_extended(k: int, seed: int = 0) -> int:
    """hash_bytes_uint32_extended(k, seed) as a signed 64-bit integer."""
    if seed:
        a = b = c = (0x9E3779B9 + 4 + 3923095) & _M
        a, b, c = _seed(a, b, c, seed & 0xFFFFFFFFFFFFFFFF)
        a = (a + (k & _M)) & _M
        a, b, c = _final(a, b, c)
        return _signed64(b, c)
    # Seed 0 (what routing uses), the final mix inlined: this is the hot path of hash maps.
    M = _M
    b = c = 0x9E735654  # 0x9E3779B9 + 4 + 3923095
    a = (0x9E735654 + k) & M
    c ^= b; c = (c - (((b << 14) | (b >> 18)) & M)) & M
    a ^= c; a = (a - (((c << 11) | (c >> 21)) & M)) & M
    b ^= a; b = (b - (((a << 25) | (a >> 7)) & M)) & M
    c ^= b; c = (c - (((b << 16) | (b >> 16)) & M)) & M
    a ^= c; a = (a - (((c << 4) | (c >> 28)) & M)) & M
    b ^= a; b = (b - (((a << 14) | (a >> 18)) & M)) & M
    c ^= b; c = (c - (((b << 24) | (b >> 8)) & M)) & M
    v = (b << 32) | c
    return v - 0x10000000000000000 if v >= 0x8000000000000000 else v


def hashint4extended(value: int) -> int:
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"{value} is out of range for int")
    return hash_uint32_extended(value & _M)


def hashint8extended(value: int) -> int:
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"{value} is out of range for bigint")
    u = value & 0xFFFFFFFFFFFFFFFF
    lo, hi = u & _M, u >> 32
    lo ^= hi if value >= 0 else (~hi & _M)
    return hash_uint32_extended(lo)


def hashtextextended(value) -> int:
    """The text's UTF-8 bytes (COLLATE "C": deterministic, so the bytes themselves)."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    return hash_bytes_extended(bytes(value))


def uuid_hash_extended(value) -> int:
    """value: a uuid.UUID or its 16 bytes."""
    data = value.bytes if hasattr(value, "bytes") else bytes(value)
    if len(data) != 16:
        raise ValueError("a uuid is 16 bytes")
    return hash_bytes_extended(data)
