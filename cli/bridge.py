"""`metasre bridge openenv` and `metasre mcp`: serve a running server's seats to OpenEnv and MCP.

Both serve one Starlette app (`metasre.agents.bridges`) with uvicorn in front of `--target`;
they need the `openenv` or `mcp` extra. Each prints one JSON line with its URL on stdout once
listening; SIGTERM or Ctrl-C stops it, closing the sessions it created.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
from typing import Any

from .arguments import add_command, positive_int
from .connection import Connection, add_connection_flags
from .errors import AddressInUseError, ExitCode, UnreachableError, UsageError

REACH_SECONDS = 5.0
"""How long the bridge waits for `--target` to answer before giving up at start."""


class FamilySplits:
    """The splits of the families this metasre knows (the simulator's), for a reset's `split`.

    The bridge itself sees only the wire, which does not carry splits; the command line, which
    ties the packages together, lends it the simulator's. A scenario this build does not know
    (a newer server's) has no split here: a reset naming one is refused, one without plays.
    """

    def warm(self) -> None:
        """Load the families' registry now, not on the first reset (it would stall the loop)."""
        from ..simulator import scenario_ids

        scenario_ids()

    def split_of(self, scenario: str, seed: int) -> str:
        """'train' or 'test'.

        Raises:
            LookupError: a scenario this metasre does not know.
        """
        from ..simulator import resolve
        from ..simulator.scenarios.splits import split_of

        return split_of(resolve(scenario), seed)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535; 0 picks one)")
    return port


def _flags(p: argparse.ArgumentParser, port: int) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=_port, default=port, help="port (0 picks a free one)")
    p.add_argument(
        "--max-seats",
        type=positive_int,
        default=1024,
        help="seats played through the bridge at once (WebSockets and MCP sessions)",
    )
    p.add_argument(
        "--max-message-bytes",
        type=positive_int,
        default=1 << 20,
        help="largest WebSocket message or HTTP body the bridge reads",
    )
    p.add_argument(
        "--access-token-env",
        metavar="NAME",
        help="environment variable holding a token that creating a session through the bridge"
        " requires (as 'Authorization: Bearer TOKEN'); unset: whoever reaches the bridge may "
        "create sessions. Joining a seat always takes that seat's token",
    )
    add_connection_flags(p, local="none: give the server to bridge to")


def add_parsers(sub: Any) -> None:
    """`bridge openenv` and `mcp`."""
    p = add_command(
        sub,
        "bridge",
        "serve a running server's seats over another protocol (openenv)",
        "Serve a running metasre server's seats over another ecosystem's protocol.",
    )
    kinds = p.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    o = add_command(
        kinds,
        "openenv",
        "OpenEnv 0.10's WebSocket protocol (TRL, verifiers, SkyRL, OpenEnv's clients)",
        "Serve OpenEnv's protocol in front of --target: WS /ws (reset creates a session or "
        "joins a seat with its token; step calls tools as OpenEnv's CallToolAction), GET "
        "/schema, /health, /metadata, /openapi.json and POST /mcp; with --mcp also the MCP "
        "server per seat of `metasre mcp`. Needs pip install 'metasre[openenv]'.",
    )
    _flags(o, 8000)
    o.add_argument("--mcp", action="store_true", help="also serve the MCP server per seat")
    o.set_defaults(func=_bridge, openenv=True)
    m = add_command(
        sub,
        "mcp",
        "serve each seat as an MCP server (Streamable HTTP) in front of a running server",
        "Serve an MCP server per seat in front of --target: POST /sessions creates a session "
        "and answers each seat's token and URL, /mcp/SESSION/SEAT is that seat's MCP server "
        "(Streamable HTTP, the seat's token as 'Authorization: Bearer'). Needs pip install "
        "'metasre[mcp]'.",
    )
    _flags(m, 8001)
    m.set_defaults(func=_bridge, openenv=False, mcp=True)


def _bridge(args: argparse.Namespace) -> int:
    try:
        from ..agents.bridges import Limits, build_app
        from ..agents.bridges.run import bind, server_for, url_of
    except ImportError as exc:
        extra = "openenv" if args.openenv else "mcp"
        raise UsageError(
            f"metasre {'bridge openenv' if args.openenv else 'mcp'} needs the {extra} extra "
            f"({exc.name} is missing): pip install 'metasre[{extra}]'"
        ) from None
    connection = Connection.from_args(args)
    if not connection.target:
        raise UsageError(
            "the bridge fronts a running server: give it with --target HOST:PORT (or "
            "$METASRE_TARGET); start one with `metasre serve`"
        )
    access: str | None = None
    if args.access_token_env:
        access = os.environ.get(args.access_token_env) or None
        if access is None:
            raise UsageError(
                f"--access-token-env names ${args.access_token_env}, which is empty or unset; "
                "export the token there, or leave the flag out"
            )
    limits = Limits(max_seats=args.max_seats, max_message_bytes=args.max_message_bytes)
    target = connection.target

    async def reach() -> None:
        async with connection.client(target) as client:
            try:
                await client.wait_for_server(REACH_SECONDS)
            except TimeoutError:
                raise UnreachableError(
                    f"nothing answers at {target} within {REACH_SECONDS:.0f} s; is `metasre "
                    "serve` running there (TLS: --tls, --tls-ca)? Check --target"
                ) from None
            await client.list_tools()  # a wrong admin token is refused here, not per user

    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        where = f"{args.host}:{args.port}"
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(
                f"cannot serve on {where}: the port is in use; pick another --port, or --port 0"
            ) from None
        raise UsageError(
            f"cannot serve on {where}: {exc.strerror}; check --host and --port"
        ) from None
    try:
        asyncio.run(reach())
    except BaseException:
        sock.close()
        raise
    splits = FamilySplits()
    splits.warm()
    app = build_app(
        lambda: connection.client(target),
        limits=limits,
        access_token=access,
        splits=splits,
        openenv=args.openenv,
        mcp=args.mcp,
    )
    server = server_for(app, limits.max_message_bytes)

    async def serve() -> None:
        async def announce() -> None:
            await server.listening.wait()
            print(json.dumps({"event": "serving", "url": url_of(sock)}), flush=True)

        told = asyncio.create_task(announce())
        try:
            await server.serve(sockets=[sock])
        finally:
            told.cancel()

    asyncio.run(serve())
    return ExitCode.OK


__all__ = ["FamilySplits", "add_parsers"]
