"""The gRPC service: sessions of one or more agents around one simulated incident.

runner = prepare_sandbox()  # before any gRPC thread exists: it forks the sandbox's helper
server = await build_server(ServerConfig(port=0), runner)
await server.start()

A server process runs its loop with `run_server(...)` (uvloop's, where installed).

What this package offers is what `__all__` names (pinned by tests/test_public_api.py); the
modules behind it are its own business.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what static tools follow; at run time `__getattr__` loads them
    from .config import Limits, ServerConfig, is_store_url
    from .core.errors import StoreError
    from .core.shards import Shard
    from .directory import Directory, build_directory
    from .server import (
        MetasreServer,
        build_server,
        prepare_sandbox,
        run_server,
        serve,
    )
    from .store.contract import Store
    from .store.export import episodes, write_jsonl
    from .store.lock import StoreInUseError
    from .store.opening import describe_store, open_store
    from .store.sqlite import TrajectoryStore
    from .version import PROTOCOL_VERSION, SERVER_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "SERVER_VERSION",
    "Directory",
    "Limits",
    "MetasreServer",
    "ServerConfig",
    "Shard",
    "Store",
    "StoreError",
    "StoreInUseError",
    "TrajectoryStore",
    "build_directory",
    "build_server",
    "describe_store",
    "episodes",
    "is_store_url",
    "open_store",
    "prepare_sandbox",
    "run_server",
    "serve",
    "write_jsonl",
]

_HOMES = {
    "Directory": ".directory",
    "Limits": ".config",
    "MetasreServer": ".server",
    "PROTOCOL_VERSION": ".version",
    "SERVER_VERSION": ".version",
    "ServerConfig": ".config",
    "Shard": ".core.shards",
    "Store": ".store.contract",
    "StoreError": ".core.errors",
    "StoreInUseError": ".store.lock",
    "TrajectoryStore": ".store.sqlite",
    "build_directory": ".directory",
    "build_server": ".server",
    "describe_store": ".store.opening",
    "episodes": ".store.export",
    "is_store_url": ".config",
    "open_store": ".store.opening",
    "prepare_sandbox": ".server",
    "run_server": ".server",
    "serve": ".server",
    "write_jsonl": ".store.export",
}
"""Each public name's module, loaded on first use."""


def __getattr__(name: str) -> object:
    # PEP 562: a name is imported when first asked for, so that importing a pure part of the
    # service (`service.core`, `service.store`) does not load the server and its gRPC stack.
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_HOMES[name], __name__), name)
    return value
