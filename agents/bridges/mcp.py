"""An MCP server per seat over Streamable HTTP: /mcp/{session_id}/{agent_id}, bearer token.

The seat's join token is the bearer credential. It speaks the handshake-era protocol
(initialize, then requests carrying `Mcp-Session-Id`, up to revision 2025-11-25), which `mcp`
1.x and 2.x clients both negotiate: a 2.x client's `server/discover` probe gets "method not
found" and falls back to initialize, as the MCP specification's version negotiation says.
Every answer is plain JSON (the transport allows a server to answer a POST with
`application/json` and to offer no SSE stream on GET).

`initialize` joins the seat with the token (the server checks it); `instructions` are the page
as the seat's view shows it, and the resource `metasre://seat/dashboard` its dashboard as JSON.
`tools/list` gives the tools the seat may call with their JSON Schemas; `tools/call` applies one
call as the seat and answers with its text, and with the reward and, at the end, the team grade
in `structuredContent`. A session whose episode ended answers every later call with the end,
never an error.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import ClientError
from .hub import BridgeError, Hub
from .openenv import list_tools
from .seat import BridgeSeat, Step

log = structlog.get_logger(__name__)

PROTOCOL_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era revisions this server speaks (the newest is offered to any other request)."""
SESSION_HEADER = "mcp-session-id"

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
DASHBOARD = {
    "uri": "metasre://seat/dashboard",
    "name": "dashboard",
    "description": "The incident's dashboard as this seat's view shows it now (JSON): alerts, "
    "services with their health and dependencies, the clock, the budget.",
    "mimeType": "application/json",
}
"""The one resource: what the OpenEnv reset's `dashboard` gives."""
UNAUTHORIZED = -32001
"""A server-defined JSON-RPC error code: the seat's credential is missing or wrong."""


@dataclass(slots=True)
class McpSeat:
    """One MCP session: the seat it plays, and the credential and path it was opened with."""

    seat: BridgeSeat
    token: str
    path: tuple[str, str]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def _error(rid: Any, code: int, message: str, status: int = 200, **headers: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}},
        status_code=status,
        headers=headers or None,
    )


def _result(rid: Any, result: dict[str, Any], **headers: str) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": result}, headers=headers or None)


def _bearer(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def tool_result(step: Step) -> dict[str, Any]:
    """A step as an MCP CallToolResult: text for the model, the rest as structured content."""
    observation = step.observation
    error = observation.get("error")
    lines = [str(observation.get("result") or (error or {}).get("message") or "")]
    for message in observation.get("messages") or ():
        lines.append(f"[message from {message.get('from_agent_id')}] {message.get('text')}")
    if step.done:
        meta = step.metadata
        lines.append(
            f"[episode over ({meta.get('phase', '')}): team grade {meta.get('team_grade')}, "
            f"resolved {meta.get('resolved')}, your reward total {meta.get('reward_total')}]"
        )
    structured = {
        "ok": error is None and not step.metadata.get("refused", False),
        "data": observation.get("data") or {},
        "error": error,
        "messages": observation.get("messages") or [],
        "reward": step.reward,
        "done": step.done,
        "metadata": step.metadata,
    }
    return {
        "content": [{"type": "text", "text": "\n".join(line for line in lines if line)}],
        "structuredContent": structured,
        "isError": error is not None,
    }


class McpServer:
    """The MCP sessions of one bridge, each a seat."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.sessions: dict[str, McpSeat] = {}

    async def handle(self, request: Request) -> Response:
        """POST, GET and DELETE on /mcp/{session_id}/{agent_id}."""
        path = (request.path_params["session_id"], request.path_params["agent_id"])
        token = _bearer(request)
        if not token:
            return _error(
                None,
                UNAUTHORIZED,
                "this MCP server plays one seat: send its join token as "
                "'Authorization: Bearer TOKEN'",
                401,
                **{"www-authenticate": "Bearer"},
            )
        if request.method == "GET":
            # No server-initiated stream: everything the seat hears comes with its results.
            return Response(status_code=405, headers={"allow": "POST, DELETE"})
        if request.method == "DELETE":
            held = self._held(request, path, token)
            if isinstance(held, Response):
                return held
            self.sessions.pop(request.headers[SESSION_HEADER], None)
            await self.hub.leave(held.seat)
            return Response(status_code=200)
        body = await request.body()
        if len(body) > self.hub.limits.max_message_bytes:
            return _error(
                None,
                INVALID_REQUEST,
                f"the request has {len(body)} bytes; the server reads at most "
                f"{self.hub.limits.max_message_bytes}",
                413,
            )
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return _error(None, PARSE_ERROR, f"the body is not JSON: {exc}", 400)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(
                None,
                INVALID_REQUEST,
                "send one JSON-RPC 2.0 message (an object with jsonrpc '2.0'); batches are not "
                "taken",
                400,
            )
        method, rid = message.get("method"), message.get("id")
        if not isinstance(method, str):
            # A response to a server request: this server sends none.
            return Response(status_code=202)
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(rid, INVALID_PARAMS, "params must be an object", 400)
        if method == "initialize":
            return await self._initialize(rid, params, path, token)
        if method == "server/discover":
            # The 2026 revision's probe: "not found" tells a client to use the handshake.
            return _error(rid, METHOD_NOT_FOUND, "server/discover not found: use initialize")
        held = self._held(request, path, token)
        if isinstance(held, Response):
            return held
        if "id" not in message:  # a notification (initialized, cancelled...): nothing to say
            return Response(status_code=202)
        if method == "ping":
            return _result(rid, {})
        if method == "tools/list":
            tools = await list_tools(self.hub, held.seat)
            return _result(
                rid,
                {
                    "tools": [
                        {
                            "name": t["name"],
                            "description": t["description"],
                            "inputSchema": t["input_schema"],
                        }
                        for t in tools
                    ]
                },
            )
        if method == "resources/list":
            return _result(rid, {"resources": [DASHBOARD]})
        if method == "resources/read":
            if params.get("uri") != DASHBOARD["uri"]:
                return _error(
                    rid,
                    INVALID_PARAMS,
                    f"no resource {params.get('uri')!r}; this server has {DASHBOARD['uri']}",
                )
            text = orjson.dumps(held.seat.conn.observation).decode()
            return _result(
                rid,
                {
                    "contents": [
                        {"uri": DASHBOARD["uri"], "mimeType": "application/json", "text": text}
                    ]
                },
            )
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments") or {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                return _error(
                    rid,
                    INVALID_PARAMS,
                    "tools/call takes name (a string) and arguments (an object)",
                )
            async with held.lock:
                try:
                    step = await held.seat.call(name, arguments)
                except (ClientError, TimeoutError) as exc:
                    return _error(rid, INVALID_REQUEST, f"the seat's stream ended: {exc}")
            return _result(rid, tool_result(step))
        return _error(
            rid,
            METHOD_NOT_FOUND,
            f"method {method!r} not found: this server has tools/list and tools/call",
        )

    def _held(self, request: Request, path: tuple[str, str], token: str) -> McpSeat | Response:
        """The MCP session a request belongs to, if its id, path and token all match."""
        sid = request.headers.get(SESSION_HEADER)
        if not sid:
            return _error(
                None, INVALID_REQUEST, f"no {SESSION_HEADER} header: initialize first", 400
            )
        held = self.sessions.get(sid)
        if held is None:
            return _error(
                None, INVALID_REQUEST, "unknown or ended MCP session: initialize again", 404
            )
        if held.path != path or not hmac.compare_digest(held.token, token):
            return _error(
                None, UNAUTHORIZED, "this MCP session belongs to another seat or credential", 403
            )
        return held

    async def _initialize(
        self, rid: Any, params: dict[str, Any], path: tuple[str, str], token: str
    ) -> Response:
        await self._sweep()
        try:
            seat = await self.hub.join(path[0], token)
        except BridgeError as exc:
            status = 503 if exc.code == "CAPACITY_REACHED" else 403
            return _error(rid, UNAUTHORIZED, exc.message, status)
        if seat.agent_id != path[1]:
            await self.hub.leave(seat, close_if_last=False)
            return _error(
                rid,
                UNAUTHORIZED,
                f"this token opens seat {seat.agent_id!r}, not {path[1]!r}: use "
                f"/mcp/{path[0]}/{seat.agent_id}",
                403,
            )
        sid = secrets.token_urlsafe(18)
        self.sessions[sid] = McpSeat(seat, token, path)
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        first = seat.first().observation
        return _result(
            rid,
            {
                "protocolVersion": version,
                "capabilities": {
                    "tools": {"listChanged": False},
                    "resources": {"listChanged": False, "subscribe": False},
                },
                "serverInfo": {"name": "metasre-seat", "version": "1"},
                "instructions": f"You are {seat.agent_id} in META-SRE session {seat.session_id}."
                f"\n{first.get('text', '')}",
            },
            **{SESSION_HEADER: sid},
        )

    async def _sweep(self) -> None:
        """Forget the MCP sessions whose seat's stream has ended and that no client deleted.

        The server's idle limit or a closed session ends a stream; its seat would count against
        --max-seats for good.
        """
        ended = [sid for sid, held in self.sessions.items() if held.seat.conn.lost is not None]
        for sid in ended:
            held = self.sessions.pop(sid)
            await self.hub.leave(held.seat)

    async def close(self) -> None:
        """Leave every seat (the bridge is stopping)."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for held in sessions:
            await self.hub.leave(held.seat)


__all__ = ["PROTOCOL_VERSIONS", "McpServer", "tool_result"]
