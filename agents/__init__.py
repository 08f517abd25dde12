"""Agents that play META-SRE: policies, and (over the wire) the client SDK and rollouts.

Nothing here imports the simulator or the service: agents see exactly what a client in any
other language sees.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what static tools follow; at run time `__getattr__` loads them
    from .client import AgentConnection, CallResult, MetasreClient, SessionHandle
    from .errors import ClientError, ConnectionLostError, EpisodeOverError
    from .retry import RetryPolicy
    from .rollout import EpisodeResult, EpisodeSpec, iter_rollouts, solo_player
    from .sync import SyncAgent, SyncClient

__all__ = [
    "AgentConnection",
    "CallResult",
    "ClientError",
    "ConnectionLostError",
    "EpisodeOverError",
    "EpisodeResult",
    "EpisodeSpec",
    "MetasreClient",
    "RetryPolicy",
    "SessionHandle",
    "SyncAgent",
    "SyncClient",
    "iter_rollouts",
    "solo_player",
]

_HOMES = {
    "AgentConnection": ".client",
    "CallResult": ".client",
    "ClientError": ".errors",
    "ConnectionLostError": ".errors",
    "EpisodeOverError": ".errors",
    "EpisodeResult": ".rollout",
    "EpisodeSpec": ".rollout",
    "MetasreClient": ".client",
    "RetryPolicy": ".retry",
    "SessionHandle": ".client",
    "SyncAgent": ".sync",
    "SyncClient": ".sync",
    "iter_rollouts": ".rollout",
    "solo_player": ".rollout",
}
"""Each public name's module, loaded on first use."""


def __getattr__(name: str) -> object:
    # PEP 562: a name is imported when first asked for, so that the pure policies
    # (`agents.policies`) load without the client SDK and its gRPC stack.
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_HOMES[name], __name__), name)
    return value
