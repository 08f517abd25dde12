"""Every published tool schema states every rule the server enforces (issue 28, item 5).

Calls are generated from each tool's JSON Schema as ListTools publishes it (each property's
boundary values, every enum member, optional fields alone and all together), kept only when
the schema itself accepts them (jsonschema, Draft 2020-12), and sent to a real server: none may
be refused as invalid. A rule the server keeps to itself (edit_lines' exactly one of
`start_line` and `find`) shows up as a call the schema accepts and the server refuses.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import grpc
import jsonschema
import pytest
from google.protobuf import json_format

from metasre.service.server import MetasreServer
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, create, owned_channel, struct

SESSION_NAMES = {("send_message", "to"): [["*"], ["a"], ["a", "*"]]}
"""Values no schema can list, for they depend on the session (its agent ids): taken from it, as
a client takes them from SessionInfo; the property's description says what they name."""

TOP_LEVEL_COMBINATORS = ("oneOf", "anyOf", "allOf")
"""Anthropic's tool API refuses any of these at an input schema's top level (a 400 for the
whole request, whatever the tool called), so a rule across fields is said with if/then/else."""


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("anyOf") or schema.get("oneOf") or [schema])


def values(schema: dict[str, Any]) -> list[Any]:
    """A few values that `schema` accepts: its enum, its bounds, its lengths, null."""
    out: list[Any] = []
    for branch in _branches(schema):
        if "enum" in branch:
            out += branch["enum"]
            continue
        kind = branch.get("type")
        if kind == "null":
            out.append(None)
        elif kind == "boolean":
            out += [True, False]
        elif kind in ("integer", "number"):  # a Struct's numbers are doubles: 1.0 for 1
            low, high = int(branch.get("minimum", 0)), int(branch.get("maximum", 3))
            out += sorted({low, high, min(max(low, 2), high)})
        elif kind == "string":
            low, high = int(branch.get("minLength", 0)), int(branch.get("maxLength", 40))
            out += ["x" * max(low, 1), "y" * high]
            if low == 0:
                out.append("")
        elif kind == "array":
            item = values(branch.get("items", {"type": "string"}))[0]
            low, high = int(branch.get("minItems", 0)), int(branch.get("maxItems", 2))
            out += [[item] * low, [item] * min(max(low, 1), high)]
    return out


def candidates(tool: str, schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Argument objects built from `schema`'s properties (not yet checked against it)."""
    props: dict[str, Any] = schema.get("properties", {})
    required = [p for p in props if p in schema.get("required", [])]
    options = {p: SESSION_NAMES.get((tool, p)) or values(s) for p, s in props.items()}
    base = {p: options[p][0] for p in required}
    yield dict(base)
    for p in props:  # each property through its values, the others at their first
        for v in options[p]:
            yield {**base, p: v}
    optional = [p for p in props if p not in required]
    for a, b in itertools.combinations(optional, 2):  # optional fields two at a time
        yield {**base, a: options[a][0], b: options[b][0]}
    yield {p: options[p][0] for p in props}
    yield {p: options[p][-1] for p in props}


async def test_every_call_a_published_schema_accepts_the_server_accepts(
    server: MetasreServer,
) -> None:
    async with owned_channel(server.address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        agent = agent_pb2_grpc.AgentServiceStub(channel)
        listed = await control.ListTools(control_pb2.ListToolsRequest())
        created = await create(control, ("a",))
        sid, token = created.session.session_id, created.tokens[0].join_token
        refused: list[str] = []
        sent = 0
        per_tool: dict[str, int] = {}
        for tool in listed.tools:
            schema = json_format.MessageToDict(tool.input_schema)
            assert not set(TOP_LEVEL_COMBINATORS) & set(schema), tool.name
            checker = jsonschema.Draft202012Validator(schema)
            seen: set[str] = set()
            for args in candidates(tool.name, schema):
                key = json.dumps(args, sort_keys=True)
                if key in seen or not checker.is_valid(args):
                    continue
                seen.add(key)
                sent += 1
                per_tool[tool.name] = per_tool.get(tool.name, 0) + 1
                try:
                    reply = await agent.CallTool(
                        agent_pb2.CallToolRequest(
                            session_id=sid,
                            token=token,
                            call=agent_pb2.ToolCall(
                                call_id=f"{tool.name}-{sent}", tool=tool.name, args=struct(args)
                            ),
                        ),
                        timeout=TIMEOUT,
                    )
                except grpc.aio.AioRpcError as exc:
                    said = (exc.details() or "")[:200]
                    refused.append(f"{tool.name} {key[:200]}: {exc.code().name} {said}")
                    continue
                if reply.result.phase != common_pb2.EPISODE_PHASE_RUNNING:
                    await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid))
        print(f"{sent} calls the schemas accept, over {len(listed.tools)} tools")
        assert sent >= 4 * len(listed.tools)
        assert {t.name for t in listed.tools} == set(per_tool)
        assert per_tool["edit_lines"] >= 6, per_tool
        assert not refused, "\n".join(refused)


@pytest.mark.parametrize(
    "args",
    [
        {"path": "a.py", "action": "delete"},
        {"path": "a.py", "action": "delete", "start_line": 1, "find": "x"},
        {"path": "a.py", "action": "delete", "start_line": None, "find": None},
    ],
    ids=["neither", "both", "both null"],
)
async def test_edit_lines_schema_refuses_what_the_server_refuses(
    server: MetasreServer, args: dict[str, Any]
) -> None:
    """The other direction, for the one rule across fields: the schema and the server agree."""
    async with owned_channel(server.address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        listed = await control.ListTools(control_pb2.ListToolsRequest())
        (tool,) = [t for t in listed.tools if t.name == "edit_lines"]
        schema = json_format.MessageToDict(tool.input_schema)
        assert not jsonschema.Draft202012Validator(schema).is_valid(args)
        created = await create(control, ("a",))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await agent_pb2_grpc.AgentServiceStub(channel).CallTool(
                agent_pb2.CallToolRequest(
                    session_id=created.session.session_id,
                    token=created.tokens[0].join_token,
                    call=agent_pb2.ToolCall(call_id="e", tool="edit_lines", args=struct(args)),
                ),
                timeout=TIMEOUT,
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_the_report_schema_names_the_location_form_of_every_kind_of_fault(
    server: MetasreServer,
) -> None:
    """Item 7: a client from the protos alone found the report's location format for a flag,
    a config key or a queue by guessing. Every family's ground-truth location (seeds 0-3) now
    has a form that submit_report's published schema names."""
    from metasre.simulator import resolve, scenario_ids

    async with owned_channel(server.address) as channel:
        listed = await control_pb2_grpc.ControlServiceStub(channel).ListTools(
            control_pb2.ListToolsRequest()
        )
    (report,) = [t for t in listed.tools if t.name == "submit_report"]
    said = json_format.MessageToDict(report.input_schema)["properties"]["root_cause_location"]
    forms = set(re.findall(r"'([a-z]+):<", said["description"]))
    assert {"deployment", "migration", "config", "flag", "certificate", "queue", "service"} <= forms
    for family in scenario_ids():
        for seed in range(4):
            location = resolve(family).spec(seed).ground_truth.location
            kind, sep, _ = location.partition(":")
            assert (kind in forms) if sep else location.endswith(".py"), (family, seed, location)
