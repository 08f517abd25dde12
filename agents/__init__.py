"""Agents that play META-SRE: policies, and (over the wire) the client SDK and rollouts.

Nothing here imports the simulator or the service: agents see exactly what a client in any
other language sees.
"""

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
