"""The two kinds of actor a fleet on Ray is made of: a shard per node, and its directory.

A shard actor owns one `metasre serve` process (a shard of the fleet, `--shard-slot k`) and its
port on the actor's node; it starts the process again when it dies, as `metasre serve
--workers N`'s supervisor does (`metasre.service.process.ShardKeeper`), and the new process rebuilds
the slot's sessions from the store. The sessions live in the process, never in an actor: an
actor is a worker process of its own (~90-100 MiB), so there is one per node, not one per
session. The directory actor serves the fleet's directory (`metasre.service.directory`), the one
address clients dial, under a name any task of the Ray cluster can look up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

import ray

from ..service.process import ShardKeeper, free_ports, shard_store


def node_address() -> str:
    """This node's address, as Ray advertises it."""
    address: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    return address


@ray.remote(num_cpus=0, max_restarts=0)
class ShardActor:
    """Slot `slot` of a fleet, served on `host` (default: the node's address) at a free port.

    Args:
        slot: The shard's slot (its session ids end in -s<slot>).
        host: The address the shard listens on and clients dial.
    """

    def __init__(self, slot: int, host: str | None = None) -> None:
        self.slot = slot
        self.host = host or node_address()
        self.port = free_ports(self.host, 1)[0]
        self.keeper: ShardKeeper | None = None
        self._kept: asyncio.Task[None] | None = None

    def endpoint(self) -> str:
        """host:port of the shard (its process listens there once started)."""
        return f"{self.host}:{self.port}"

    def node_id(self) -> str:
        """The Ray node this shard runs on."""
        return str(ray.get_runtime_context().get_node_id())

    async def start(
        self,
        endpoints: Sequence[str],
        serve_args: Sequence[str],
        store: str | None,
        directory: Any,
    ) -> None:
        """Start the shard's process, and keep it: started again whenever it dies.

        Args:
            endpoints: Every shard's endpoint, in slot order.
            serve_args: More `metasre serve` arguments (limits, timeouts...).
            store: A PostgreSQL URL the fleet shares, or a SQLite path (each slot a file of its
                own beside it, on its node); None: no store (a dead shard's sessions are lost).
            directory: The directory actor, told of every restart.
        """
        args = [
            *serve_args,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--shard-slot",
            str(self.slot),
            "--shard-endpoints",
            ",".join(endpoints),
        ]
        args += ["--store", shard_store(store, self.slot)] if store else ["--no-store"]
        self.keeper = ShardKeeper(
            self.slot, args, on_restart=lambda slot: directory.restarted.remote(slot)
        )
        await self.keeper.start()
        self._kept = asyncio.create_task(self.keeper.keep())

    def pid(self) -> int:
        """The pid of the shard's current process (0 before it started)."""
        proc = self.keeper.proc if self.keeper is not None else None
        return proc.pid if proc is not None else 0

    def restarts(self) -> int:
        """How many times the shard's process was started again after it died."""
        return self.keeper.restarts if self.keeper is not None else 0

    async def stop(self, grace_seconds: float = 30.0) -> None:
        """Drain the shard's process and stop keeping it."""
        if self.keeper is None:
            return
        await self.keeper.stop(grace_seconds)
        if self._kept is not None:
            self._kept.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._kept


@ray.remote(num_cpus=0, max_restarts=0)
class DirectoryActor:
    """The directory of the shards at `endpoints`, served on `host`:`port` (0: a free one).

    Args:
        endpoints: Every shard's endpoint, in slot order.
        host: The address to listen on.
        port: The port (0 picks a free one).
        max_sessions_per_owner: The fleet-wide quota of one owner token.
    """

    def __init__(
        self, endpoints: Sequence[str], host: str, port: int, max_sessions_per_owner: int
    ) -> None:
        from ..service import Directory

        self.directory = Directory(endpoints, max_sessions_per_owner=max_sessions_per_owner)
        self.host = host
        self.port = port
        self.server: Any = None

    async def serve(self) -> str:
        """Start serving; the address clients dial.

        Raises:
            OSError: the address cannot be bound.
        """
        from ..service import build_directory

        if self.server is None:
            self.server, self.port, _ = await build_directory(self.directory, self.host, self.port)
        return self.address()

    def address(self) -> str:
        """host:port of the directory."""
        return f"{self.host}:{self.port}"

    def endpoints(self) -> tuple[str, ...]:
        """Every shard's endpoint, in slot order."""
        return self.directory.endpoints

    def restarted(self, slot: int) -> None:
        """Count a restart of `slot`'s process (`metasre fleet status` shows it)."""
        self.directory.restarts[slot] += 1

    async def stop(self) -> None:
        """Stop serving."""
        if self.server is not None:
            await self.server.stop(1.0)
            self.server = None
        await self.directory.close()
