"""The bridge's web application: OpenEnv's routes and the MCP servers per seat, on Starlette.

`build_app` makes one ASGI app over a `Hub`; `metasre bridge openenv` and `metasre mcp` serve it
with uvicorn. Routes:

    GET  /health, /metadata, /schema, /openapi.json     what OpenEnv's tools read
    WS   /ws                                            OpenEnv's session protocol, one seat
    POST /mcp                                           OpenEnv's JSON-RPC subset (tools/list)
    POST /sessions                                      create a session (for MCP clients)
    POST|DELETE /mcp/{session_id}/{agent_id}            an MCP server per seat
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from ..client import MetasreClient
from .hub import CREATE_KEYS, BridgeError, Hub, Limits, Splits, seat_ids
from .mcp import McpServer
from .openenv import jsonrpc, schemas, serve_socket

API_VERSION = "1.0.0"
"""The OpenAPI `info.version`: OpenEnv's validator reads 1.x as its HTTP profile."""
NAME = "metasre"
DESCRIPTION = (
    "META-SRE: agents respond to simulated production incidents and are graded like "
    "SWE-bench. Multi-agent: a reset can seat a team, and each seat joins on its own "
    "WebSocket or MCP session with its token."
)


def _openapi(paths: list[str]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": NAME, "version": API_VERSION, "description": DESCRIPTION},
        "paths": {p: {} for p in paths},
    }


def build_app(
    client: Callable[[], MetasreClient],
    *,
    limits: Limits | None = None,
    access_token: str | None = None,
    splits: Splits | None = None,
    openenv: bool = True,
    mcp: bool = True,
) -> Starlette:
    """The bridge's ASGI app.

    Args:
        client: makes the bridge's client of the server (called once, at start-up, in the
            server's event loop).
        limits: how much the bridge takes on.
        access_token: when set, creating a session needs `Authorization: Bearer` with it
            (joining a seat always needs that seat's token).
        splits: which split a family's seed is in (the command line gives the simulator's);
            without it a reset or POST /sessions that names a split is refused.
        openenv: serve OpenEnv's routes (/ws, /schema, /mcp).
        mcp: serve POST /sessions and the MCP server per seat.
    """
    state: dict[str, Any] = {}

    def hub() -> Hub:
        return state["hub"]  # type: ignore[no-any-return]

    def may_create(headers: Any) -> bool:
        if access_token is None:
            return True
        scheme, _, token = str(headers.get("authorization", "")).partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip(), access_token)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        made = client()
        state["hub"] = Hub(made, limits, splits)
        state["mcp"] = McpServer(state["hub"])
        try:
            yield
        finally:
            await state["mcp"].close()
            await state["hub"].close()
            await made.close()

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy", "seats": hub().seats})

    async def metadata(_: Request) -> JSONResponse:
        scenarios = await hub().scenarios()
        return JSONResponse(
            {
                "name": NAME,
                "description": DESCRIPTION,
                "version": API_VERSION,
                "scenarios": [s["id"] for s in scenarios],
                "multi_agent": True,
            }
        )

    async def schema(_: Request) -> JSONResponse:
        return JSONResponse(schemas())

    async def openapi(_: Request) -> JSONResponse:
        return JSONResponse(_openapi(paths))

    async def websocket(ws: WebSocket) -> None:
        await serve_socket(hub(), ws, may_create=may_create(ws.headers))

    async def mcp_rpc(request: Request) -> JSONResponse:
        return await jsonrpc(hub(), request)

    async def sessions(request: Request) -> JSONResponse:
        if not may_create(request.headers):
            return JSONResponse(
                {
                    "error": "creating a session takes the bridge's access token as "
                    "'Authorization: Bearer TOKEN'"
                },
                status_code=401,
            )
        body = await request.body()
        if len(body) > hub().limits.max_message_bytes:
            return JSONResponse({"error": "the request is too large"}, status_code=413)
        try:
            data = orjson.loads(body or b"{}")
        except orjson.JSONDecodeError as exc:
            return JSONResponse({"error": f"the body is not JSON: {exc}"}, status_code=400)
        if not isinstance(data, dict):
            return JSONResponse({"error": "the body is a JSON object"}, status_code=400)
        unknown = sorted(set(data) - CREATE_KEYS)
        if unknown:
            return JSONResponse(
                {
                    "error": f"POST /sessions does not take {', '.join(unknown)}; it takes "
                    f"{', '.join(sorted(CREATE_KEYS))}"
                },
                status_code=400,
            )
        try:
            session_id, made, tokens = await hub().create(data)
        except BridgeError as exc:
            return JSONResponse({"error": exc.message}, status_code=400)
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "session_id": session_id,
                "seed": made["seed"],
                "split": made["split"],
                "seats": {
                    agent: {"token": tokens[agent], "mcp_url": f"{base}/mcp/{session_id}/{agent}"}
                    for agent in seat_ids(data.get("seats", ["agent"]))
                },
            }
        )

    async def mcp_seat(request: Request) -> Any:
        return await state["mcp"].handle(request)

    routes: list[Any] = [
        Route("/health", health, methods=["GET"]),
        Route("/metadata", metadata, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    if openenv:
        routes += [
            Route("/schema", schema, methods=["GET"]),
            WebSocketRoute("/ws", websocket),
            Route("/mcp", mcp_rpc, methods=["POST"]),
        ]
    if mcp:
        routes += [
            Route("/sessions", sessions, methods=["POST"]),
            Route("/mcp/{session_id}/{agent_id}", mcp_seat, methods=["POST", "GET", "DELETE"]),
        ]
    paths = [r.path for r in routes]
    return Starlette(routes=routes, lifespan=lifespan)


__all__ = ["API_VERSION", "build_app"]
