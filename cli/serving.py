"""Starting a server from the command line: `metasre serve`'s and the commands' own in process.

Mistakes at start (a taken port, an unusable store, unreadable TLS files) become `CommandError`s
here, one home for what `serve`, `rollout`, `llm` and `demo` tell the user.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import (
    AddressInUseError,
    CommandError,
    StoreInUseError,
    StoreUnusableError,
    UsageError,
)

if TYPE_CHECKING:
    from ..service import MetasreServer, ServerConfig
    from ..simulator.sandbox import TestRunner
    from .connection import Connection

WEAK_ISOLATION_ENV = "METASRE_ALLOW_WEAK_ISOLATION"


def weak_isolation_from_env() -> bool:
    """True when the environment allows a sandbox without every layer."""
    return os.environ.get(WEAK_ISOLATION_ENV) == "1"


def prepare(*, weak: bool = False) -> TestRunner:
    """Start the sandbox's helper; before any gRPC thread exists (forking one is unsafe).

    `weak` (or the environment) accepts a sandbox without every layer. The runner it returns
    is the one to give the server.

    Raises:
        WeakIsolationError: the kernel lacks a layer and weak isolation was not allowed.
    """
    from ..service import prepare_sandbox

    return prepare_sandbox(weak_isolation=weak or weak_isolation_from_env())


def local_store(args: argparse.Namespace, connection: Connection) -> Path | None:
    """Where a server the command starts itself records: --store, or None.

    None with --no-store, or when the command uses a --target server (which keeps its own).
    """
    if args.no_store or connection.target:
        return None
    from ..service import is_store_url

    if is_store_url(args.store):
        raise UsageError(
            "a postgresql:// --store is for `metasre serve` (and `metasre export`); a server "
            "this command starts records into a SQLite file: pass a path, or run `metasre serve "
            "--store URL` and point this command at it with --target"
        )
    return Path(args.store)


def _bind_problem(host: str, port: int) -> str:
    """Why `host:port` cannot be bound, asking the OS the way gRPC did."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        return os.strerror(exc.errno) if exc.errno else str(exc)
    return ""


def explain_start_failure(config: ServerConfig, exc: Exception) -> CommandError | None:
    """What to tell the user when a server for `config` failed to start with `exc`.

    None when `exc` is no mistake of the user's (a bug: let it be seen).
    """
    from ..service import StoreError
    from ..service import StoreInUseError as StoreHeld

    store = config.store_path
    if isinstance(exc, StoreHeld):
        return StoreInUseError(
            f"{exc}; stop that server first, or give this one another --store PATH (or --no-store)"
        )
    if isinstance(exc, StoreError) and config.store_url is not None:
        return StoreUnusableError(
            f"{exc}; check --store (is PostgreSQL running there, does the database exist, may "
            "the user connect?), or pass --no-store"
        )
    if isinstance(exc, StoreError):
        if store is not None and not store.parent.is_dir():
            return StoreUnusableError(
                f"cannot create the trajectory store {store}: the folder {store.parent} does "
                "not exist; create it, or pass another --store (or --no-store)"
            )
        return StoreUnusableError(
            f"{exc}; pass --store with a writable path (or --no-store to record nothing)"
        )
    if config.tls_cert is not None and isinstance(exc, OSError) and exc.filename:
        return UsageError(
            f"cannot read the TLS file {exc.filename}: {exc.strerror}; check --tls-cert and "
            "--tls-key"
        )
    if not isinstance(exc, (RuntimeError, OSError)):
        return None
    address = f"{config.host}:{config.port}"
    problem = _bind_problem(config.host, config.port)
    if problem == os.strerror(errno.EADDRINUSE):
        return AddressInUseError(
            f"cannot serve on {address}: the port is in use (another metasre serve?); pick "
            "another --port, or --port 0 for a free one"
        )
    return UsageError(f"cannot serve on {address}: {problem or exc}; check --host and --port")


async def build(config: ServerConfig, runner: TestRunner | None = None) -> MetasreServer:
    """`build_server(config)`, its failures told as what to do (see `explain_start_failure`).

    Raises:
        CommandError: the server cannot start as configured.
    """
    from ..service import build_server

    try:
        return await build_server(config, runner)
    except Exception as exc:
        told = explain_start_failure(config, exc)
        if told is None:
            raise
        raise told from None


@contextlib.asynccontextmanager
async def running(config: ServerConfig) -> AsyncIterator[MetasreServer]:
    """A started server for the block's duration, stopped (and its store flushed) after."""
    server = await build(config)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(1.0)


@contextlib.contextmanager
def in_process(
    target: str | None, *, store: Path | None = None, max_sessions: int = 256
) -> Iterator[str]:
    """The address of `target`, or of a server started here on a free port for the block.

    It shares the command's logging (warnings only unless -v, see `metasre.cli.logs`), so a
    progress bar stays readable; it records into `store` when given.
    """
    if target:
        yield target
        return
    from ..agents.sync import LoopThread
    from ..service import Limits, ServerConfig

    runner = prepare()
    config = ServerConfig(
        port=0,
        # one owner (this command) plays every session: its quota is the whole server
        limits=Limits(max_sessions=max_sessions, max_sessions_per_owner=max_sessions),
        grace_seconds=1.0,
        store_path=store,
    )
    loop = LoopThread()
    try:
        server = loop.run(build(config, runner))
        loop.run(server.start())
        try:
            yield server.address
        finally:
            loop.run(server.stop(1.0))
    finally:
        loop.close()
