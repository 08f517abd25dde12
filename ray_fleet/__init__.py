"""META-SRE on Ray: a fleet with one shard per node, and a rollout pool over it.

`pip install 'metasre[ray]'`. `RayFleet.start()` places one shard (an actor owning a
`metasre serve --shard-slot k` process and its port) on every node of the cluster and serves
the directory under a name; `RayFleet.connect()` finds it from any task or actor of the
cluster; `RolloutPool` plays episodes on its shards with back-pressure. See the README's scale
section.
"""

from __future__ import annotations

try:
    import ray as _ray  # noqa: F401  (the extra's one dependency, checked before the rest)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f"metasre.ray needs Ray ({exc}): pip install 'metasre[ray]'") from None

from .actors import DirectoryActor, ShardActor
from .fleet import DEFAULT_NAME, NAMESPACE, RayFleet
from .pool import RolloutPool, RolloutWorker

__all__ = [
    "DEFAULT_NAME",
    "NAMESPACE",
    "DirectoryActor",
    "RayFleet",
    "RolloutPool",
    "RolloutWorker",
    "ShardActor",
]
