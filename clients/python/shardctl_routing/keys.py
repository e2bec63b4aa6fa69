"""Keys parsed exactly as `shardctl lookup` and `shardctl.route()` parse them
(lib/routing/key.cpp), and their place in a map's route space.

  int, bigint  decimal digits with an optional leading minus (-?[0-9]+), in range; no '+',
               no spaces, no underscores. A Python int is taken as is (range-checked).
  text         any str without NUL that is valid UTF-8 (no lone surrogates); compared as its
               UTF-8 bytes (COLLATE "C").
  uuid         PostgreSQL's uuid_in grammar: 32 hex digits, a hyphen allowed after every group
               of four (but not at the end), optionally in braces; or a uuid.UUID.

The route value of a key is what a map's bounds are compared with: the int itself, the UTF-8
bytes of a text, the 16 bytes of a uuid (byte order = uuid order), or for hash maps the
signed 64-bit hash of the key.
"""
import re
import uuid as _uuid

from . import pghash

KEY_TYPES = ("int", "bigint", "text", "uuid")
_INT_RE = re.compile(r"-?[0-9]+")
_UUID_RE = re.compile(r"[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}|\{[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}\}")
_LIMITS = {"int": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 63), (1 << 63) - 1)}


class InvalidKey(ValueError):
    """A key that does not parse as the map's key type (the server says 22P02)."""

    sqlstate = "22P02"



def _bad(key, key_type):
    shown = repr(key)[:80]
    return InvalidKey(f"{shown} is not a valid {key_type} key")


def parse_key(key_type, key):
    """The key as the map's key type: int for int/bigint, str for text, uuid.UUID for uuid.
    Raises InvalidKey (a ValueError) on a key lookup would refuse, TypeError on None."""
    if key is None:
        raise TypeError("the key is None (the server says 22004)")
    if key_type in _LIMITS:
        if isinstance(key, bool):
            raise _bad(key, key_type)
        if isinstance(key, int):
            v = key
        elif isinstance(key, str):
            if not _INT_RE.fullmatch(key) or not key.isascii():
                raise _bad(key, key_type)
            v = int(key)
        else:
            raise _bad(key, key_type)
        lo, hi = _LIMITS[key_type]
        if not lo <= v <= hi:
            raise _bad(key, key_type)
        return v
    if key_type == "text":
        if isinstance(key, (bytes, bytearray)):
            try:
                key = bytes(key).decode("utf-8")
            except UnicodeDecodeError:
                raise _bad(key, key_type) from None
        if not isinstance(key, str) or "\0" in key:
            raise _bad(key, key_type)
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise _bad(key, key_type) from None
        return key
    if key_type == "uuid":
        if isinstance(key, _uuid.UUID):
            return key
        if not isinstance(key, str) or not key.isascii() or not _UUID_RE.fullmatch(key):
            raise _bad(key, key_type)
        return _uuid.UUID(hex=key.strip("{}").replace("-", ""))
    raise ValueError(f"unknown key type {key_type!r}")


def key_text(key_type, key):
    """The key's canonical text (what route() takes): ints in decimal, uuids lower-case with
    hyphens, text as is."""
    k = parse_key(key_type, key)
    return str(k)


def hash_key(key_type, key):
    """The server's hash of a parsed key (seed 0)."""
    if key_type == "int":
        return pghash.hashint4extended(key)
    if key_type == "bigint":
        return pghash.hashint8extended(key)
    if key_type == "text":
        return pghash.hashtextextended(key)
    if key_type == "uuid":
        return pghash.uuid_hash_extended(key)
    raise ValueError(f"unknown key type {key_type!r}")


def route_value(kind, key_type, key):
    """(route value, hash or None) of a parsed key in a map of this kind and key type."""
    if kind == "hash":
        h = hash_key(key_type, key)
        return h, h
    if key_type in _LIMITS:
        return key, None
    if key_type == "text":
        return key.encode("utf-8"), None
    return key.bytes, None


def bound_value(kind, key_type, text):
    """A mapping bound (low/high as the catalog gives them) in route space; None = unbounded."""
    if text is None:
        return None
    if kind == "hash" or key_type in _LIMITS:
        return int(text)
    if key_type == "text":
        return text.encode("utf-8")
    return _uuid.UUID(text).bytes


def min_route_value(kind, key_type):
    """A value at or below every route value of the space (stands for an unbounded low)."""
    if kind == "hash" or key_type in _LIMITS:
        return -(1 << 64)
    return b""  # text and uuid route values are bytes; b"" sorts first
