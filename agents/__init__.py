"""Agents that play META-SRE: policies, and (over the wire) the client SDK and rollouts.

Nothing here imports the simulator or the service: agents see exactly what a client in any
other language sees.
"""

from metasre.agents.client import AgentConnection, CallResult, MetasreClient, SessionHandle
from metasre.agents.errors import ClientError, ConnectionLostError, EpisodeOverError
from metasre.agents.retry import RetryPolicy
from metasre.agents.rollout import EpisodeResult, EpisodeSpec, iter_rollouts, solo_player
from metasre.agents.sync import SyncAgent, SyncClient

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
