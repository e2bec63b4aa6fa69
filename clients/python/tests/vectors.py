import json
import os

VECTORS = os.environ.get("SHARDCTL_VECTORS") or os.path.join(
    os.path.dirname(__file__), "..", "..", "vectors", "routing.json")


def load():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)
