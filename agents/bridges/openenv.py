"""OpenEnv 0.10's protocol over a seat: `WS /ws`, `GET /schema`, `POST /mcp` (its JSON-RPC subset).

A WebSocket is one seat at a time. `reset` creates a session (`scenario`, optional `seed`,
`seats`, `agent_id`, `turn_policy`, `attribution`, `team_spirit`, `reward_mode`) and takes one
of its seats, or joins a seat of an existing session (`session_id`, `token`). `step` takes
OpenEnv's MCP actions: `{"type": "list_tools"}` (allowed before a reset, as verifiers sends it)
and `{"type": "call_tool", "tool_name": ..., "arguments": {...}}`. Every answer is one of
OpenEnv's frames: `observation`, `state` or `error`; a bad message gets an `error` and the
socket stays open.
"""

from __future__ import annotations

from typing import Any

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..errors import ClientError
from .hub import CREATE_KEYS, BridgeError, Hub, seat_ids
from .seat import BridgeSeat, Step

log = structlog.get_logger(__name__)

RESET_KEYS = CREATE_KEYS | {"agent_id", "session_id", "token"}
"""What a reset's data may hold."""
JOIN_KEYS = frozenset({"session_id", "token"})

TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "input_schema": {"type": "object"},
    },
    "required": ["name", "description", "input_schema"],
}


def schemas() -> dict[str, Any]:
    """GET /schema: the actions as OpenEnv's MCP actions, the observations, the state."""
    call = {
        "title": "CallToolAction",
        "description": "Call one META-SRE tool with its arguments (a list_tools step or "
        "POST /mcp tools/list gives each tool's JSON Schema).",
        "type": "object",
        "properties": {
            "type": {"const": "call_tool", "default": "call_tool", "type": "string"},
            "tool_name": {"type": "string", "description": "Name of the tool to call"},
            "arguments": {"type": "object", "default": {}},
        },
        "required": ["tool_name"],
        "additionalProperties": False,
    }
    list_tools = {
        "title": "ListToolsAction",
        "type": "object",
        "properties": {"type": {"const": "list_tools", "default": "list_tools", "type": "string"}},
        "additionalProperties": False,
    }
    return {
        "action": call,
        "actions": [call, list_tools],
        "observation": {
            "title": "CallToolObservation",
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "result": {"type": ["string", "null"]},
                "data": {"type": "object"},
                "error": {"type": ["object", "null"]},
                "messages": {"type": "array"},
                "status": {"type": "object"},
            },
        },
        "reset_observation": {
            "title": "SeatObservation",
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "the page, as the seat sees it"},
                "dashboard": {"type": "object"},
                "session_id": {"type": "string"},
                "agent_id": {"type": "string"},
                "role": {"type": "string"},
                "view": {"type": "object"},
                "allowed_tools": {"type": "array", "items": {"type": "string"}},
            },
        },
        "list_tools_observation": {
            "title": "ListToolsObservation",
            "type": "object",
            "properties": {"tools": {"type": "array", "items": TOOL_SCHEMA}},
        },
        "state": {
            "title": "State",
            "type": "object",
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer"},
            },
        },
    }


def frame(kind: str, data: dict[str, Any]) -> str:
    """One OpenEnv frame as text."""
    return orjson.dumps({"type": kind, "data": data}).decode()


def error_frame(message: str, code: str) -> str:
    """An `error` frame: OpenEnv's client raises it as `Server error: MESSAGE (code: CODE)`."""
    return frame("error", {"message": message, "code": code})


def observation_frame(step: Step) -> str:
    """An `observation` frame."""
    return frame(
        "observation",
        {
            "observation": step.observation,
            "reward": step.reward,
            "done": step.done,
            "metadata": step.metadata,
        },
    )


async def list_tools(hub: Hub, seat: BridgeSeat | None) -> list[dict[str, Any]]:
    """The tools as OpenEnv's `Tool`s: those the seat may call, all before a reset."""
    allowed = set(seat.allowed_tools()) if seat is not None else set()
    return [
        {
            "name": t["name"],
            "description": t["description"],
            "input_schema": t.get("input_schema") or {"type": "object"},
        }
        for t in await hub.tools()
        if not allowed or t["name"] in allowed
    ]


class Socket:
    """One WebSocket's conversation: its messages in order, and the seat it holds."""

    def __init__(self, hub: Hub, ws: WebSocket, *, may_create: bool = True) -> None:
        self.hub = hub
        self.ws = ws
        self.may_create = may_create
        """Whether this client may create sessions (it showed the bridge's access token)."""
        self.seat: BridgeSeat | None = None

    async def run(self) -> None:
        """Answer messages until the client closes or sends `close`."""
        await self.ws.accept()
        try:
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    return
                raw = message.get("text")
                if raw is None:
                    raw = message.get("bytes") or b""
                reply = await self.answer(raw)
                if reply is None:
                    await self.drop()  # before the close frame: a client that saw it may reset
                    await self.ws.close(1000, "closed by the client")
                    return
                await self.ws.send_text(reply)
        except WebSocketDisconnect:
            return
        finally:
            await self.drop()

    async def drop(self) -> None:
        """Leave the seat held, if any."""
        seat, self.seat = self.seat, None
        if seat is not None:
            await self.hub.leave(seat)

    async def answer(self, raw: str | bytes) -> str | None:
        """The frame answering one message; None for `close`."""
        if len(raw) > self.hub.limits.max_message_bytes:
            return error_frame(
                f"the message has {len(raw)} bytes; the bridge reads at most "
                f"{self.hub.limits.max_message_bytes}",
                "VALIDATION_ERROR",
            )
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return error_frame(f"the message is not JSON: {exc}", "INVALID_JSON")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return error_frame(
                'a message is a JSON object {"type": "reset"|"step"|"state"|"close", "data": ...}',
                "INVALID_JSON",
            )
        kind = message["type"][:64]  # echoed in errors: a name, not a payload
        data = message.get("data", {})
        if data is None:
            data = {}
        try:
            if not isinstance(data, dict):
                raise BridgeError(f"{kind}'s data must be a JSON object; got {type(data).__name__}")
            if kind == "reset":
                return observation_frame(await self.reset(data))
            if kind == "step":
                return await self.step(data)
            if kind == "state":
                if self.seat is None:
                    return frame("state", {"episode_id": None, "step_count": 0})
                return frame("state", self.seat.state())
            if kind == "close":
                return None
        except BridgeError as exc:
            return error_frame(exc.message, exc.code)
        except ClientError as exc:
            return error_frame(f"the server ended the seat: {exc}", "SESSION_ERROR")
        except TimeoutError:
            return error_frame("the episode's end did not arrive in time", "EXECUTION_ERROR")
        except Exception:
            # A bug of the bridge's: say so on this socket, keep it and every other one.
            log.exception("bridge_message_failed", kind=kind)
            return error_frame("the bridge failed on this message (logged)", "EXECUTION_ERROR")
        return error_frame(
            f"unknown message type {kind!r}; send reset, step, state or close", "UNKNOWN_TYPE"
        )

    async def reset(self, data: dict[str, Any]) -> Step:
        """Create a session and take a seat of it, or join a seat with its token."""
        unknown = sorted(set(data) - RESET_KEYS)
        if unknown:
            raise BridgeError(
                f"reset does not take {', '.join(unknown)}; it takes "
                f"{', '.join(sorted(RESET_KEYS))}"
            )
        await self.drop()
        if "session_id" in data or "token" in data:
            extra = sorted(set(data) - JOIN_KEYS)
            if extra:
                raise BridgeError(
                    f"joining a seat takes session_id and token only; {', '.join(extra)} belong "
                    "to the session's creation"
                )
            self.seat = await self.hub.join(data.get("session_id", ""), data.get("token", ""))
            return self.seat.first()
        if not self.may_create:
            raise BridgeError(
                "creating a session through this bridge takes its access token: open the "
                "WebSocket with 'Authorization: Bearer TOKEN' (or join a seat with session_id "
                "and token)",
                "SESSION_ERROR",
            )
        create = {k: v for k, v in data.items() if k != "agent_id"}
        ids = seat_ids(create.get("seats", ["agent"]) or [])
        agent_id = data.get("agent_id", ids[0] if ids else "")
        if agent_id not in ids:
            raise BridgeError(f"agent_id {agent_id!r} is not one of the seats {ids}")
        session_id, made, tokens = await self.hub.create(create, eager=True)
        self.seat = await self.hub.join(session_id, tokens[agent_id])
        first = self.seat.first()
        # The creator hands its teammates their seats: each joins with reset(session_id, token).
        first.metadata["seed"] = made["seed"]
        first.metadata["split"] = made["split"]
        first.metadata["tokens"] = {a: t for a, t in tokens.items() if a != agent_id}
        return first

    async def step(self, data: dict[str, Any]) -> str:
        """The frame answering one step: a tool call as the seat, or the tools."""
        kind = data.get("type", "call_tool")
        if kind == "list_tools":
            extra = sorted(set(data) - {"type"})
            if extra:
                raise BridgeError(f"list_tools takes no fields; got {', '.join(extra)}")
            tools = await list_tools(self.hub, self.seat)
            return observation_frame(Step({"tools": tools}, None, False))
        if kind != "call_tool":
            raise BridgeError(
                f"unknown action type {kind!r}: send call_tool (tool_name, arguments) or "
                "list_tools (GET /schema)"
            )
        extra = sorted(set(data) - {"type", "tool_name", "arguments"})
        if extra:
            raise BridgeError(
                f"call_tool takes tool_name and arguments; {', '.join(extra)} is not one of them"
            )
        tool, arguments = data.get("tool_name"), data.get("arguments", {})
        if not isinstance(tool, str) or not tool:
            raise BridgeError("call_tool needs tool_name, a tool's name (list_tools gives them)")
        if not isinstance(arguments, dict):
            raise BridgeError(f"arguments must be a JSON object; got {type(arguments).__name__}")
        if self.seat is None:
            raise BridgeError(
                "no seat yet: reset first (scenario=..., or session_id and token)",
                "SESSION_ERROR",
            )
        return observation_frame(await self.seat.call(tool, arguments))


async def jsonrpc(hub: Hub, request: Request) -> JSONResponse:
    """POST /mcp: OpenEnv's JSON-RPC subset (`tools/list`; calls go to a seat)."""
    body = await request.body()
    if len(body) > hub.limits.max_message_bytes:
        return _rpc_error(None, -32600, "the request is larger than the bridge reads")
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _rpc_error(None, -32700, "the body is not JSON")
    if not isinstance(message, dict) or "method" not in message:
        return _rpc_error(
            message.get("id") if isinstance(message, dict) else None,
            -32600,
            "a JSON-RPC 2.0 request has jsonrpc, method, params and id",
        )
    rid = message.get("id")
    if message["method"] == "tools/list":
        tools = [
            {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
            for t in await list_tools(hub, None)
        ]
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    if message["method"] == "tools/call":
        return _rpc_error(
            rid,
            -32601,
            "tools are called on a seat: over WS /ws after a reset, or with MCP at "
            "/mcp/{session_id}/{agent_id} with the seat's token (metasre mcp)",
        )
    return _rpc_error(rid, -32601, f"method {message['method']!r} not found; try tools/list")


def _rpc_error(rid: Any, code: int, message: str) -> JSONResponse:
    # OpenEnv's validator wants 200 and a JSON-RPC body even for a malformed request.
    return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


async def serve_socket(hub: Hub, ws: WebSocket, *, may_create: bool = True) -> None:
    """WS /ws."""
    await Socket(hub, ws, may_create=may_create).run()


__all__ = ["RESET_KEYS", "Socket", "jsonrpc", "list_tools", "schemas", "serve_socket"]
