"""The one JSON encoder (`struct_wire`) against protobuf's own Struct, and the Connect stream's
prebuilt bytes against the messages `convert` builds."""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from typing import Any

import orjson
from google.protobuf import json_format, struct_pb2
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metasre.agents.plain import struct_dict, to_dict
from metasre.service.core.events import Applied, Reward
from metasre.service.wire import convert
from metasre.service.wire.struct_wire import struct_bytes, varint
from metasre.simulator import Episode
from metasre.v1 import agent_pb2, common_pb2


def json_dict(message: Any) -> dict[str, Any]:
    """What the SDK's plain data must equal: protobuf's own JSON mapping."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


_keys = st.one_of(st.text(max_size=140), st.integers(-5, 5))
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=300),
    st.sampled_from(["", "x" * 124, "y" * 125, "é" * 70, "\ud800 lone surrogate"]),
)
_json = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.tuples(inner, inner),
        st.frozensets(st.text(max_size=5), max_size=4),
        st.dictionaries(_keys, inner, max_size=6),
    ),
    max_leaves=40,
)


def _parsed(data: dict[Any, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.ParseFromString(struct_bytes(data))
    return out


def _reference(data: Mapping[Any, Any]) -> struct_pb2.Struct:
    """What the encoder promises, built with protobuf's own `Struct.update`: str keys, finite
    numbers as doubles (anything else JSON cannot hold as its str()), tuples as lists, sets
    sorted, and past 32 levels of nesting the rest as its str()."""

    def jsonable(value: Any, depth: int) -> Any:
        if depth > 32:
            return str(value)
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int | float):
            number = float(value)
            return number if math.isfinite(number) else str(value)
        if isinstance(value, Mapping):
            return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
            return [jsonable(v, depth + 1) for v in items]
        return str(value)

    out = struct_pb2.Struct()
    out.update(jsonable(dict(data), 0))
    return out


def _utf8_safe(data: Any) -> Any:
    # upb refuses lone surrogates; the wire encoder sends U+FFFD instead (never fails a call).
    if isinstance(data, str):
        return data.encode("utf-8", "replace").decode()
    if isinstance(data, dict):
        return {_utf8_safe(k): _utf8_safe(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_utf8_safe(v) for v in data]
    return data


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=8))
def test_struct_bytes_parse_to_protobuf_s_own_struct(data: dict[Any, Any]) -> None:
    assert _parsed(data) == _reference(_utf8_safe(data))
    assert convert.dict_to_struct(data) == _parsed(data)


def test_lengths_at_every_one_byte_boundary() -> None:
    for n in range(0, 140):
        for m in (0, 1, 200, *range(max(0, 0x78 - n), max(0, 0x84 - n))):
            data = {"k" * n: "v" * m}
            assert _parsed(data) == _reference(data), (n, m)


def test_deep_nesting_turns_into_text() -> None:
    deep: Any = "leaf"
    for _ in range(40):
        deep = {"d": [deep]}
    assert _parsed({"top": deep}) == _reference({"top": deep})


def test_varint() -> None:
    assert varint(0) == b"\x00"
    assert varint(127) == b"\x7f"
    assert varint(128) == b"\x80\x01"
    assert varint(300) == b"\xac\x02"


def _applied(tool: str, args: dict[str, Any]) -> Applied:
    episode = Episode.make("meta-sre/migration-cascade-v3", 0)
    step = episode.apply("a1", tool, args)
    return Applied(
        tick=step.tick,
        agent_id="a1",
        call_id="call-7",
        tool=tool,
        args=step.args,
        ok=step.ok,
        error_code=step.output.error or "",
        text=step.output.text,
        data=step.output.data,
        minutes=step.minutes,
        clock=step.clock,
        round=0,
        phase=step.phase,
        observation=episode.observation(),
        reward=Reward(
            agent_id="a1",
            tick=step.tick,
            components={"explore": 0.01},
            total=0.01,
            source_agent_id="a1",
        ),
    )


def test_prebuilt_responses_equal_the_messages() -> None:
    for tool, args in (
        ("read_logs", {"service": "nope"}),
        ("get_alerts", {}),
        ("check_dependencies", {}),
        ("list_files", {}),
    ):
        event = _applied(tool, args)
        for as_json in (False, True):
            data = convert.data_json(event) if as_json else convert.data_bytes(event)
            result = agent_pb2.ConnectResponse.FromString(
                convert.result_response_bytes(event, 42, data, as_json=as_json)
            )
            assert result == agent_pb2.ConnectResponse(
                call_id="call-7",
                result=convert.tool_result_pb(event, as_json=as_json),
                sequence=42,
            )
            applied = agent_pb2.ConnectResponse.FromString(
                convert.applied_response_bytes(event, 42, data, as_json=as_json)
            )
            assert applied == agent_pb2.ConnectResponse(
                applied=convert.applied_pb(event, as_json=as_json), sequence=42
            )
            # One form or the other, never both: a JSON stream gets no Struct to parse.
            assert result.result.HasField("data") is not as_json
            assert bool(result.result.data_json) is as_json
            assert applied.applied.HasField("data") is not as_json


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=8))
def test_the_json_data_is_the_structs_data(data: dict[str, Any]) -> None:
    """data_json holds what the Struct holds: the SDK reads either into the same data.

    But for numbers: a Struct's are doubles (the SDK's floats), JSON's keep their form, and a
    number JSON cannot hold is null (a Struct's encoder writes its str()).
    """
    assume(_depth(data) <= 32)  # deeper, a Struct's encoder writes the rest as text
    event = _event_with(data)
    read = orjson.loads(convert.data_json(event))
    assert _numbers_as_floats(read) == _numbers_as_floats(
        struct_dict(struct_pb2.Struct.FromString(convert.data_bytes(event)))
    )


def _depth(value: Any) -> int:
    if isinstance(value, Mapping):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list | tuple):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_the_json_data_of_a_mapping_that_is_not_a_dict_is_an_object() -> None:
    data = types.MappingProxyType({"a": types.MappingProxyType({"b": 1}), "s": {"y", "x"}})
    assert orjson.loads(convert.data_json(_event_with(data))) == {"a": {"b": 1}, "s": ["x", "y"]}


def _event_with(data: Mapping[str, Any]) -> Applied:
    event = _applied("get_alerts", {})
    return dataclasses.replace(event, data=data)


def _numbers_as_floats(value: Any) -> Any:
    """`value` with every number a float, and a non-finite one (or its text) as None."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return None
    if isinstance(value, dict):
        return {k: _numbers_as_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    return value


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.dictionaries(st.text(max_size=20), _json, max_size=8))
def test_the_client_reads_a_struct_as_json_format_does(data: dict[str, Any]) -> None:
    struct = _parsed(data)
    try:
        expected = json_dict(struct)
    except ValueError:  # json_format refuses what no server sends: infinite numbers
        return
    assert struct_dict(struct) == expected


def test_the_client_reads_applied_calls_as_json_format_does() -> None:
    for tool, args in (("read_logs", {"service": "nope"}), ("get_alerts", {})):
        event = _applied(tool, args)
        data = convert.data_bytes(event)
        applied = agent_pb2.ConnectResponse.FromString(
            convert.applied_response_bytes(event, 3, data, as_json=False)
        ).applied
        assert to_dict(applied) == json_dict(applied)
        assert to_dict(common_pb2.AppliedCall(tool="x")) == json_dict(
            common_pb2.AppliedCall(tool="x")
        )


async def test_the_client_lists_tools_as_json_format_reads_them(server, control):
    from metasre.agents.client import MetasreClient
    from metasre.v1 import control_pb2

    reply = await control.ListTools(control_pb2.ListToolsRequest())
    async with MetasreClient(server.address) as client:
        tools = await client.list_tools()
    assert len(tools) == len(reply.tools) >= 20
    assert tools == [json_dict(t) for t in reply.tools]
