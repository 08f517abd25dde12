"""Every text a call carries has a limit its JSON Schema states, and no call grows the store much.

Through a real server with a real store: the schemas are read as clients read them
(ListTools), a text one character over its limit is refused with the field named, and calls
whose every text is at its limit (in four-byte characters, the most bytes a character takes)
grow the SQLite file by at most `PER_CALL_BYTES` each, however many of them come.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from metasre.service import Limits, ServerConfig, build_server
from metasre.v1 import control_pb2, control_pb2_grpc

from .conftest import PAY, AgentClient, create, details, owned_channel, pay_solution

WIDE = "\U0001f600"
"""A character that takes four bytes in UTF-8: texts at their limit in it are the largest."""
PER_CALL_BYTES = 1_000_000
"""The most one call (its arguments, its result, its reward and message) may add to the store."""
FILE = "payment_service/handlers.py"


def strings(schema: dict[str, Any], path: str, defs: dict[str, Any]) -> list[tuple[str, Any]]:
    """(path, schema) of every string and array in a JSON Schema, refs followed."""
    if "$ref" in schema:
        return strings(defs[schema["$ref"].rsplit("/", 1)[-1]], path, defs)
    found: list[tuple[str, Any]] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            found += strings(sub, path, defs)
    kind = schema.get("type")
    if kind in ("string", "array"):
        found.append((path, schema))
    if kind == "array" and "items" in schema:
        found += strings(schema["items"], f"{path}[]", defs)
    for name, sub in schema.get("properties", {}).items():
        found += strings(sub, f"{path}.{name}", defs)
    return found


@contextlib.asynccontextmanager
async def serving(store: Path) -> AsyncIterator[grpc.aio.Channel]:
    server = await build_server(
        ServerConfig(port=0, limits=Limits(), grace_seconds=0.5, store_path=store)
    )
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            yield channel
    finally:
        await server.stop(0.5)  # the store is checkpointed and closed: its file holds it all


async def test_every_text_of_every_tool_has_a_limit_its_schema_states(channel):
    control = control_pb2_grpc.ControlServiceStub(channel)
    tools = (await control.ListTools(control_pb2.ListToolsRequest())).tools
    unbounded = []
    for tool in tools:
        schema = json_format.MessageToDict(tool.input_schema)
        for path, sub in strings(schema, tool.name, schema.get("$defs", {})):
            if sub.get("type") == "string" and "enum" not in sub and "const" not in sub:
                if not 0 < sub.get("maxLength", 0) <= 20_000:
                    unbounded.append(path)
            elif sub.get("type") == "array" and not 0 < sub.get("maxItems", 0) <= 64:
                unbounded.append(path)
    assert not unbounded, f"texts or lists with no stated limit: {unbounded}"
    report = next(t for t in tools if t.name == "submit_report")
    timeline = json_format.MessageToDict(report.input_schema)["properties"]["timeline"]
    assert (timeline["maxItems"], timeline["items"]["maxLength"]) == (50, 500)


async def test_a_text_over_its_limit_is_refused_naming_the_field(channel):
    control = control_pb2_grpc.ControlServiceStub(channel)
    created = await create(control, ("a",))
    client = AgentClient(channel)
    await client.join(created.session.session_id, created.tokens[0].join_token)
    _, report = pay_solution()[-1]
    over = [
        ("submit_report", {**report, "timeline": ["x" * 501]}, "args.timeline.0"),
        ("submit_report", {**report, "timeline": ["x"] * 51}, "args.timeline"),
        ("submit_report", {**report, "summary": "x" * 4001}, "args.summary"),
        ("send_message", {"text": "x" * 4001}, "args.text"),
        ("send_message", {"text": "hi", "to": ["x" * 65]}, "args.to.0"),
        ("edit_lines", {"path": FILE, "action": "insert", "start_line": 1,
                        "content": "x" * 20_001}, "args.content"),
    ]  # fmt: skip
    for tool, args, field in over:
        reply = await client.result_or_error(client.tool(tool, args))
        assert reply.WhichOneof("response") == "error", (tool, field)
        assert reply.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
        _, violations = details(reply.error)
        assert field in [f for f, _ in violations], (tool, violations)
    # None of them reached the world.
    reply = await client.result_or_error(client.tool("get_alerts"))
    assert reply.result.tick == 1


async def play_at_the_limits(channel: grpc.aio.Channel) -> int:
    """One episode of calls whose texts are all at their limits; how many calls it made."""
    control = control_pb2_grpc.ControlServiceStub(channel)
    created = await create(control, ("a",))
    client = AgentClient(channel)
    await client.join(created.session.session_id, created.tokens[0].join_token)
    line = "#" + WIDE * 9_998  # three of them and the file are near a file's limit
    insert = {"path": FILE, "action": "insert", "start_line": 1, "content": line}
    calls: list[tuple[str, dict[str, Any]]] = [("edit_lines", insert)] * 3
    for _ in range(4):
        calls += [
            ("send_message", {"text": WIDE * 4000}),
            ("edit_lines", {"path": FILE, "action": "replace", "start_line": 1,
                            "end_line": 2, "content": line + "\n" + line}),
            ("view_file", {"path": FILE, "start_line": 1, "end_line": 2000}),
            ("git_blame", {"path": FILE}),
            ("git_diff", {}),
        ]  # fmt: skip
    _, report = pay_solution()[-1]
    calls.append(
        (
            "submit_report",
            {
                **report,
                "summary": WIDE * 4000,
                "root_cause_location": WIDE * 512,
                "timeline": [WIDE * 500] * 50,
            },
        )
    )
    for tool, args in calls:
        reply = await client.result_or_error(client.tool(tool, args))
        assert reply.WhichOneof("response") == "result", (tool, reply.error.message)
    await client.until_end()
    client.close()
    return len(calls)


async def test_calls_at_every_limit_grow_the_store_by_a_bounded_amount_each(tmp_path):
    quiet, loud = tmp_path / "quiet.db", tmp_path / "loud.db"
    async with serving(quiet) as channel:
        client = AgentClient(channel)
        created = await create(control_pb2_grpc.ControlServiceStub(channel), ("a",))
        await client.join(created.session.session_id, created.tokens[0].join_token)
        await client.result_or_error(client.tool("get_alerts"))
        client.close()
    async with serving(loud) as channel:
        calls = await play_at_the_limits(channel)
    grown = loud.stat().st_size - quiet.stat().st_size
    assert grown <= calls * PER_CALL_BYTES, f"{grown / calls / 1024:.0f} KiB per call"
    # The bound is not slack for a store that keeps nothing: the texts are in it.
    assert grown >= calls * 16_000


async def test_an_edit_cannot_grow_a_file_past_its_limit(channel):
    control = control_pb2_grpc.ControlServiceStub(channel)
    created = await create(control, ("a",), scenario=PAY)
    client = AgentClient(channel)
    await client.join(created.session.session_id, created.tokens[0].join_token)
    edit = {"path": FILE, "action": "insert", "start_line": 1, "content": "#" + "x" * 19_999}
    outcomes = []
    for _ in range(3):  # 60 000 characters asked for; a file holds at most 40 000
        reply = await client.result_or_error(client.tool("edit_lines", edit))
        outcomes.append((reply.result.ok, reply.result.error_code))
    assert outcomes[0] == (True, "") and outcomes[2] == (False, "bad_edit")
    text = reply.result.text
    assert "at most 40000 characters" in text and FILE in text
    many = {"path": FILE, "action": "insert", "start_line": 1, "content": "\n" * 2500}
    reply = await client.result_or_error(client.tool("edit_lines", many))
    assert (reply.result.ok, reply.result.error_code) == (False, "bad_edit")
    assert "2000 lines" in reply.result.text
