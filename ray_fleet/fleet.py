"""A META-SRE fleet on a Ray cluster: one shard per node, and a directory under a name.

    fleet = RayFleet.start(store="postgresql://metasre@db/metasre")   # from the driver
    print(fleet.address)          # the directory: MetasreClient(fleet.address) and go
    ...
    fleet = RayFleet.connect()    # from any task or actor of the same cluster (a trainer's job)

Clients talk gRPC to the shards themselves (the directory names each session's shard, and the
SDKs follow it): no episode's traffic goes through an actor call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from .actors import DirectoryActor, ShardActor, node_address

DEFAULT_NAME = "metasre"
"""The name a fleet is published under when none is given."""
NAMESPACE = "metasre"
"""The Ray namespace of a fleet's actors: a job's own namespace is anonymous unless it names
one, and a named actor is found only from its namespace, so a trainer's job could not find a
fleet another job started."""


@dataclass(frozen=True, slots=True)
class RayFleet:
    """A fleet on Ray: its directory's address, its shards' endpoints and their actors."""

    name: str
    """What the fleet is published under (its directory actor is `<name>-directory` in the
    Ray namespace `metasre`)."""
    address: str
    """host:port of the directory: the one address clients dial."""
    endpoints: tuple[str, ...]
    """Each shard's host:port, in slot order."""
    shards: tuple[Any, ...]
    """Each shard's actor (`ShardActor`), in slot order."""
    directory: Any
    """The directory's actor (`DirectoryActor`)."""

    @classmethod
    def start(
        cls,
        *,
        name: str = DEFAULT_NAME,
        store: str | None = None,
        serve_args: Sequence[str] = (),
        host: str | None = None,
        port: int = 0,
        nodes: Sequence[str] | None = None,
        max_sessions_per_owner: int = 64,
        detached: bool = False,
    ) -> RayFleet:
        """Start a shard on every alive node (or on each of `nodes`) and the directory.

        Args:
            name: What the fleet is published under; `connect(name)` finds it.
            store: A PostgreSQL URL the shards share (a shard that dies is rebuilt from it,
                wherever it runs), or a SQLite path on each node; None: no store.
            serve_args: More `metasre serve` arguments for every shard (limits, timeouts...).
            host: The address shards and directory listen on and are dialled at (default:
                each node's address).
            port: The directory's port (0: a free one).
            nodes: The Ray node ids to place a shard on, one each (default: every alive node).
            max_sessions_per_owner: The fleet-wide quota of one owner token.
            detached: Whether the fleet outlives the driver that started it (stop it with
                `RayFleet.connect(name).stop()`).

        Raises:
            ValueError: no node to place a shard on.
            ray.exceptions.RayError: a shard or the directory could not start (its error says
                why).
        """
        if nodes is None:
            alive = ray.nodes()  # type: ignore[no-untyped-call]  # Ray leaves it unannotated
            nodes = sorted(n["NodeID"] for n in alive if n.get("Alive"))
        if not nodes:
            raise ValueError("no alive Ray node to place a shard on: is ray.init() connected?")
        lifetime = {"lifetime": "detached"} if detached else {}
        shards = tuple(
            ShardActor.options(  # type: ignore[attr-defined]
                name=f"{name}-shard-{slot}",
                namespace=NAMESPACE,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                **lifetime,
            ).remote(slot, host)
            for slot, node in enumerate(nodes)
        )
        endpoints = tuple(ray.get([s.endpoint.remote() for s in shards]))
        here = ray.get_runtime_context().get_node_id()
        directory = DirectoryActor.options(  # type: ignore[attr-defined]
            name=f"{name}-directory",
            namespace=NAMESPACE,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True),
            **lifetime,
        ).remote(endpoints, host or node_address(), port, max_sessions_per_owner)
        try:
            ray.get([s.start.remote(endpoints, list(serve_args), store, directory) for s in shards])
            address = ray.get(directory.serve.remote())
        except BaseException:
            for actor in (*shards, directory):
                ray.kill(actor)
            raise
        return cls(name, address, endpoints, shards, directory)

    @classmethod
    def connect(cls, name: str = DEFAULT_NAME) -> RayFleet:
        """The fleet published under `name`, from any task or actor of the cluster.

        Raises:
            ValueError: no fleet is published under that name.
        """
        try:
            directory = ray.get_actor(f"{name}-directory", namespace=NAMESPACE)
        except ValueError:
            raise ValueError(
                f"no META-SRE fleet named {name!r} on this Ray cluster (its directory actor "
                f"{name}-directory is not there): start one with RayFleet.start(name=...)"
            ) from None
        endpoints: tuple[str, ...] = tuple(ray.get(directory.endpoints.remote()))
        shards = tuple(
            ray.get_actor(f"{name}-shard-{slot}", namespace=NAMESPACE)
            for slot in range(len(endpoints))
        )
        return cls(name, ray.get(directory.address.remote()), endpoints, shards, directory)

    def shard_pids(self) -> list[int]:
        """The pid of each shard's current process, in slot order (each on its own node)."""
        return list(ray.get([s.pid.remote() for s in self.shards]))

    def restarts(self) -> list[int]:
        """How many times each shard's process was started again after it died."""
        return list(ray.get([s.restarts.remote() for s in self.shards]))

    def stop(self, grace_seconds: float = 30.0) -> None:
        """Stop the directory, drain every shard, and end their actors."""
        try:
            ray.get(self.directory.stop.remote())
            ray.get([s.stop.remote(grace_seconds) for s in self.shards])
        finally:
            for actor in (self.directory, *self.shards):
                ray.kill(actor)
