"""`metasre serve --workers N`: N shard processes behind a directory, and `metasre fleet status`.

The supervisor (this process) picks one port per shard, starts each shard as a `metasre serve`
child that knows its slot and every shard's endpoint, serves the directory
(`metasre.service.directory`) on the public port, and restarts a shard that dies: the new
process takes the same slot, port and store, and rebuilds the slot's open sessions from the
store before it serves (today's recovery), so clients resume their seats where they were.

With a SQLite store each shard records into its own file (`metasre.db` -> `metasre.s0.db`,
...); with a PostgreSQL store they share the database, each holding its slot's lock.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any

import structlog

from ..service.process import ShardKeeper, free_ports, shard_store
from .errors import UsageError

log = structlog.get_logger("metasre.cli.fleet")

SHARD_FLAGS = ("--shard-slot", "--shard-endpoints")
"""The flags the supervisor gives a shard (hidden from `metasre serve --help`)."""


def worker_count(value: str) -> int:
    """`--workers`: a positive count, or `auto` for one per core this process may use.

    Raises:
        argparse.ArgumentTypeError: neither.
    """
    if value == "auto":
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= 256:
        raise argparse.ArgumentTypeError(
            f"--workers takes a count of shard processes, 1-256, or 'auto' (one per core); got "
            f"{value[:20]!r}"
        )
    return n


def die_with_supervisor() -> None:
    """Have the kernel SIGTERM this shard when the process that started it dies (Linux).

    A supervisor killed outright (SIGKILL, the OOM killer) cannot stop its shards: without this
    they would serve on, unwatched, holding their ports, their store locks and the pipes the
    supervisor's own parent reads. SIGTERM drains the shard as a stop would.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # it died before the kernel was told to watch it
        os.kill(os.getpid(), signal.SIGTERM)


def advertised(host: str) -> str:
    """The host clients dial for a shard listening on `host` (a wildcard is not dialable)."""
    if host in ("0.0.0.0", "::", ""):
        return socket.getfqdn()
    return host


def _child_args(argv: list[str]) -> list[str]:
    """`metasre serve`'s own arguments without those the supervisor sets per shard."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--workers", "--port", "--store", *SHARD_FLAGS):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


class Fleet:
    """The shard processes of one `metasre serve --workers N` and their directory."""

    def __init__(self, args: argparse.Namespace, argv: list[str]) -> None:
        self.args = args
        self.n: int = args.workers
        host = args.host
        if args.port:
            ports = [args.port + 1 + i for i in range(self.n)]
            if ports[-1] > 65535:
                raise UsageError(
                    f"--workers {self.n} shards serve on ports {args.port + 1}-{ports[-1]}, past "
                    "65535: pick a lower --port"
                )
        else:
            ports = free_ports(host, self.n)
        self.ports = ports
        self.endpoints = [f"{advertised(host)}:{p}" for p in ports]
        self.base = _child_args(argv)
        self.directory: Any = None
        self.keepers = [
            ShardKeeper(
                slot,
                self._shard_args(slot),
                verbose=bool(getattr(args, "verbose", 0)),
                on_restart=self._restarted,
            )
            for slot in range(self.n)
        ]

    def _restarted(self, slot: int) -> None:
        if self.directory is not None:
            self.directory.restarts[slot] += 1

    def _shard_args(self, slot: int) -> list[str]:
        args = [
            *self.base,
            "--port",
            str(self.ports[slot]),
            "--shard-slot",
            str(slot),
            "--shard-endpoints",
            ",".join(self.endpoints),
        ]
        if not self.args.no_store:
            args += ["--store", shard_store(self.args.store, slot)]
        return args

    async def run(self) -> None:
        """Serve until SIGTERM or SIGINT; then stop the directory and drain every shard."""
        from ..service import Directory, build_directory

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        keepers: list[asyncio.Task[None]] = []
        server = None
        try:
            started = await asyncio.gather(
                *(k.start() for k in self.keepers), return_exceptions=True
            )
            failed = [r for r in started if isinstance(r, BaseException)]
            if failed:
                raise UsageError(
                    f"{len(failed)} of {self.n} shards did not start ({failed[0]}); their "
                    "logs above say why"
                )
            self.directory = Directory(
                self.endpoints, max_sessions_per_owner=self.args.max_sessions_per_owner
            )
            try:
                server, port, _ = await build_directory(
                    self.directory, self.args.host, self.args.port
                )
            except (RuntimeError, OSError) as exc:
                raise UsageError(
                    f"cannot serve the directory on {self.args.host}:{self.args.port} ({exc}); "
                    "pick another --port, or --port 0 for a free one"
                ) from None
            keepers = [asyncio.create_task(k.keep()) for k in self.keepers]
            address = f"{self.args.host}:{port}"
            log.info("fleet_serving", address=address, shards=self.endpoints)
            print(
                json.dumps({"event": "serving", "address": address, "shards": self.endpoints}),
                flush=True,
            )
            await stop.wait()
        finally:
            for keeper in self.keepers:
                keeper.stopping = True
            for task in keepers:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if server is not None:
                await server.stop(1.0)
            await asyncio.gather(*(k.stop(self.args.grace_seconds + 30) for k in self.keepers))
            if self.directory is not None:
                await self.directory.close()


def serve_fleet(args: argparse.Namespace) -> int:
    """Run `metasre serve --workers N` (N > 1) until SIGTERM or SIGINT."""
    if args.tls_cert or args.tls_key:
        raise UsageError(
            "--workers serves its directory without TLS for now: run shards behind a TLS "
            "proxy, or one TLS server without --workers"
        )
    given = list(getattr(args, "argv", ()))
    argv = given[given.index("serve") + 1 :] if "serve" in given else []
    asyncio.run(Fleet(args, argv).run())
    return 0


def _status_rows(info: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for shard in info.get("shards", []):
        load = shard.get("load", {})
        rows.append(
            {
                "slot": shard.get("slot", 0),
                "endpoint": shard.get("endpoint", ""),
                "serving": shard.get("serving", False),
                "open_sessions": load.get("open_sessions", 0),
                "closed_sessions": int(load.get("closed_sessions", 0)),
                "refused_sessions": int(load.get("refused_sessions", 0)),
                "store_commits": int(load.get("store_commits", 0)),
                "restarts": shard.get("restarts", 0),
                "store_problem": load.get("store_problem", ""),
            }
        )
    return rows


def fleet_status(info: dict[str, Any], *, as_json: bool) -> str:
    """`metasre fleet status`'s output for a server's GetServerInfo (as plain data)."""
    rows = _status_rows(info)
    if as_json:
        return json.dumps({"shards": rows}, indent=2)
    if not rows:
        return "a lone server (no --workers): no shards"
    lines = [
        f"{'slot':>4}  {'endpoint':<22} {'state':<11} {'open':>5} {'closed':>7} "
        f"{'refused':>7} {'commits':>8} {'restarts':>8}  store"
    ]
    for r in rows:
        state = "serving" if r["serving"] else "DOWN"
        lines.append(
            f"{r['slot']:>4}  {r['endpoint']:<22} {state:<11} {r['open_sessions']:>5} "
            f"{r['closed_sessions']:>7} {r['refused_sessions']:>7} {r['store_commits']:>8} "
            f"{r['restarts']:>8}  {r['store_problem'] or 'ok'}"
        )
    return "\n".join(lines)
