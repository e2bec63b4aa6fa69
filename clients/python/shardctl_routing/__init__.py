"""shardctl_routing: the reference client of shardctl's routing contract (man/shardctl-routing.7).

MapCache keeps shard maps (snapshot + changes, NOTIFY-driven, polling when it cannot listen);
Router runs transactions on the shard a key routes to, stating the map version it routed by,
and retries refusals (SQLSTATE 55000, constraints shardctl_moving / shardctl_fenced /
shardctl_stale_route) as the contract says.
"""
from .keys import InvalidKey, parse_key, hash_key
from .mapcache import MapCache, MapState, Mapping, Route, CHANNEL
from .router import (Router, Refusal, Unmapped, AmbiguousCommit, ConnectionLost, Outcome,
                     REFUSAL_KINDS)

__all__ = ["InvalidKey", "parse_key", "hash_key", "MapCache", "MapState", "Mapping", "Route",
           "CHANNEL", "Router", "Refusal", "Unmapped", "AmbiguousCommit", "ConnectionLost",
           "Outcome", "REFUSAL_KINDS"]
