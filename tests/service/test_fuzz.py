"""Hostile input: Hypothesis-generated requests against every RPC of a real `metasre serve`.

Requests are built from the protos' own descriptors, so every field of every request is covered
and a new field is fuzzed without touching this file: strings (unicode, huge), integers at and
past their limits, NaN and infinite doubles, enum numbers that name nothing, repeated fields,
unknown fields appended on the wire, and now and then bytes that are no protobuf at all. Fields
that name a session or carry a token are often real ones, and tool calls often name real tools
with their real argument names, so the requests get past the first check and reach the tools.
Tool arguments are arbitrary JSON: wrong types, deep nesting, huge strings, unknown fields.

Every reply must be a result or a proper status (in-band on Connect), never INTERNAL or UNKNOWN
from the service (only gRPC's own "cannot deserialize" for non-protobuf bytes), and must come
within its deadline; the server must log no internal error and still be serving at the end.
Examples are derandomized and bounded, so the module takes well under 30 s.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.rpc import status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metasre.simulator import TOOLS
from metasre.v1 import agent_pb2, common_pb2, control_pb2, watch_pb2

from .conftest import PAY

# Under `pytest -n`: its module fixture is one `metasre serve` the fuzzer hits: one worker.
pytestmark = pytest.mark.xdist_group("fuzz")

DEADLINE = 15.0
"""Seconds any reply may take; a hang fails the test instead of blocking it."""
FINE = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.OUT_OF_RANGE,
}
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
TOOL_NAMES = sorted(TOOLS)
ARG_NAMES = sorted(
    {
        name
        for tool in TOOLS.values()
        for name in tool.args.model_json_schema().get("properties", {})
    }
)


@dataclass
class Target:
    channel: grpc.Channel
    proc: subprocess.Popen[str]
    log: Path
    sessions: list[tuple[str, list[str]]]
    """(session id, join tokens) of real sessions."""

    def unary(self, method: str, payload: bytes, timeout: float = DEADLINE) -> Any:
        call = self.channel.unary_unary(f"/metasre.v1.{method}")
        return call(payload, timeout=timeout)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    work = tmp_path_factory.mktemp("fuzz")
    log = work / "server.log"
    env = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "metasre.cli.main", "serve", "--port", "0"),
                *("--no-store", "--max-sessions", "1000", "--turn-timeout-seconds", "2"),
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=work,
            env=env,
        )
    try:
        assert proc.stdout is not None
        address = json.loads(proc.stdout.readline())["address"]
        with grpc.insecure_channel(address) as channel:
            t = Target(channel, proc, log, [])
            for policy in ("TURN_POLICY_FREE_FOR_ALL", "TURN_POLICY_ROUND_ROBIN"):
                request = control_pb2.CreateSessionRequest(
                    scenario_id=PAY,
                    seats=[common_pb2.SeatConfig(agent_id=a) for a in ("a", "b")],
                    turn_policy=policy,
                )
                # The first creation renders the family and warms the server's graders: at a
                # run's start on a loaded machine it took more than DEADLINE (a hang's bound).
                reply = control_pb2.CreateSessionResponse.FromString(
                    t.unary("ControlService/CreateSession", request.SerializeToString(), 120.0)
                )
                t.sessions.append((reply.session.session_id, [s.join_token for s in reply.tokens]))
            yield t
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


# -- values -----------------------------------------------------------------------------------


def huge_text() -> st.SearchStrategy[str]:
    return st.builds(lambda c, n: c * n, st.characters(), st.integers(1_000, 300_000))


TEXT = st.one_of(st.text(max_size=40), huge_text(), st.sampled_from(["", "*", "..", "\x00"]))
NUMBERS = st.one_of(
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 2**31, -(2**31) - 1, 2**53 + 1, 1e308, -1e308]),
)


def nested(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"k": leaf}
    return leaf


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=12,
)
VALUES = st.one_of(JSON, st.builds(nested, st.integers(1, 150), JSON))
ARGS = st.dictionaries(
    st.one_of(st.sampled_from(ARG_NAMES), st.text(max_size=20)), VALUES, max_size=6
)


def field_bytes(number: int, payload: bytes) -> bytes:
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def value_bytes(value: Any) -> bytes:
    """A google.protobuf.Value on the wire, encoded by hand: no client-side depth limit."""
    if value is None:
        return varint(1 << 3) + varint(0)
    if isinstance(value, bool):
        return varint(4 << 3) + varint(int(value))
    if isinstance(value, int | float):
        return varint((2 << 3) | 1) + struct.pack("<d", float(value))
    if isinstance(value, str):
        return field_bytes(3, value.encode("utf-8", "surrogatepass"))
    if isinstance(value, list):
        return field_bytes(6, b"".join(field_bytes(1, value_bytes(v)) for v in value))
    return field_bytes(5, struct_bytes(value))


def struct_bytes(data: dict[str, Any]) -> bytes:
    """A google.protobuf.Struct on the wire."""
    return b"".join(
        field_bytes(
            1, field_bytes(1, k.encode("utf-8", "surrogatepass")) + field_bytes(2, value_bytes(v))
        )
        for k, v in data.items()
    )


def to_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    try:
        out.update(data)
    except (ValueError, TypeError, RecursionError):
        out.update({"unrepresentable": True})
    return out


# -- messages from descriptors ----------------------------------------------------------------

SCALARS: dict[int, st.SearchStrategy[Any]] = {
    FieldDescriptor.TYPE_STRING: TEXT,
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_DOUBLE: st.floats(allow_nan=True, allow_infinity=True),
    FieldDescriptor.TYPE_FLOAT: st.floats(width=32, allow_nan=True, allow_infinity=True),
    FieldDescriptor.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_ENUM: st.integers(-5, 50),
    FieldDescriptor.TYPE_BYTES: st.binary(max_size=64),
}


def field_values(target: Target, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    name = field.name
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name == "google.protobuf.Struct":
            return ARGS.map(to_struct)
        values = messages(target, field.message_type, depth + 1)
    elif name == "session_id":
        values = st.one_of(TEXT, st.sampled_from([s for s, _ in target.sessions]))
    elif name in ("token", "join_token", "resume_token"):
        tokens = [t for _, ts in target.sessions for t in ts]
        values = st.one_of(TEXT, st.sampled_from(tokens))
    elif name == "scenario_id":
        values = st.one_of(TEXT, st.just(PAY))
    elif name == "tool":
        values = st.one_of(TEXT, st.sampled_from(TOOL_NAMES))
    elif name in ("agent_id", "role"):
        values = st.one_of(TEXT, st.sampled_from(["a", "b"]))
    else:
        values = SCALARS.get(field.type, st.none())
    if field.is_repeated:
        return st.lists(values, max_size=4 if depth < 2 else 0)
    return values


def messages(target: Target, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Any]:
    cls = message_factory.GetMessageClass(descriptor)
    if depth > 3:
        return st.just(cls())
    fields = {f.name: field_values(target, f, depth) for f in descriptor.fields}

    def build(values: dict[str, Any]) -> Any:
        message = cls()
        for name, value in values.items():
            field = descriptor.fields_by_name[name]
            try:
                if field.is_repeated:
                    getattr(message, name).extend(value)
                elif field.type == FieldDescriptor.TYPE_MESSAGE:
                    getattr(message, name).CopyFrom(value)
                else:
                    setattr(message, name, value)
            except (ValueError, TypeError):
                pass  # a value this field cannot hold (protobuf refuses it client-side)
        return message

    return st.fixed_dictionaries({}, optional=fields).map(build)


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


UNKNOWN_FIELDS = st.lists(
    st.one_of(
        st.builds(
            lambda f, v: varint(f << 3) + varint(v), st.integers(50, 9999), st.integers(0, 2**63)
        ),
        st.builds(
            lambda f, b: varint((f << 3) | 2) + varint(len(b)) + b,
            st.integers(50, 9999),
            st.binary(max_size=40),
        ),
    ),
    max_size=3,
).map(b"".join)


def wire(target: Target, descriptor: Descriptor) -> st.SearchStrategy[bytes]:
    """A serialized request, unknown fields appended; now and then bytes that are no message."""
    good = st.builds(
        lambda m, extra: m.SerializeToString() + extra, messages(target, descriptor), UNKNOWN_FIELDS
    )
    return st.one_of(good, good, good, st.binary(max_size=200))


# -- checks -----------------------------------------------------------------------------------


def check_status(code: grpc.StatusCode, details: str, payload: bytes) -> None:
    if code == grpc.StatusCode.INTERNAL and "deserializ" in (details or "").lower():
        return  # gRPC itself: the bytes are not the request message
    assert code in FINE, (code, details[:300], payload[:120])
    assert "Traceback" not in (details or "")


def check_in_band(status: status_pb2.Status) -> None:
    code = next(c for c in grpc.StatusCode if c.value[0] == status.code)
    assert code in FINE - {grpc.StatusCode.OK}, (code, status.message[:300])


def unary_checked(target: Target, method: str, payload: bytes) -> None:
    try:
        target.unary(method, payload)
    except grpc.RpcError as exc:
        check_status(exc.code(), exc.details() or "", payload)


UNARY = {
    "ControlService/GetServerInfo": control_pb2.GetServerInfoRequest,
    "ControlService/ListScenarios": control_pb2.ListScenariosRequest,
    "ControlService/ListTools": control_pb2.ListToolsRequest,
    "ControlService/CreateSession": control_pb2.CreateSessionRequest,
    "ControlService/GetSession": control_pb2.GetSessionRequest,
    "ControlService/ListSessions": control_pb2.ListSessionsRequest,
    "ControlService/ResetSession": control_pb2.ResetSessionRequest,
    "ControlService/CloseSession": control_pb2.CloseSessionRequest,
    "ControlService/GetGrade": control_pb2.GetGradeRequest,
    "ControlService/GetTrajectory": control_pb2.GetTrajectoryRequest,
    "AgentService/CallTool": agent_pb2.CallToolRequest,
}


def test_every_rpc_is_covered():
    methods = {
        f"{s.name}/{m.name}"
        for module in (agent_pb2, control_pb2, watch_pb2)
        for s in module.DESCRIPTOR.services_by_name.values()
        for m in s.methods
    }
    assert methods == set(UNARY) | {"AgentService/Connect", "WatchService/WatchSession"}


@pytest.mark.parametrize("method", sorted(UNARY))
def test_unary_rpcs_answer_hostile_requests_with_a_proper_status(target: Target, method: str):
    @settings(FUZZ, max_examples=15 if method != "AgentService/CallTool" else 40)
    @given(payload=wire(target, UNARY[method].DESCRIPTOR))
    def run(payload: bytes) -> None:
        unary_checked(target, method, payload)

    run()


def test_tool_calls_with_hostile_arguments_reach_the_tools_and_fail_cleanly(target: Target):
    def fresh() -> tuple[str, str]:
        request = control_pb2.CreateSessionRequest(
            scenario_id=PAY, seats=[common_pb2.SeatConfig(agent_id="a")]
        )
        reply = control_pb2.CreateSessionResponse.FromString(
            target.unary("ControlService/CreateSession", request.SerializeToString())
        )
        return reply.session.session_id, reply.tokens[0].join_token

    sid, token = fresh()
    reached = set()

    @settings(FUZZ, max_examples=4 * len(TOOL_NAMES))
    @given(tool=st.sampled_from(TOOL_NAMES), args=ARGS, call_id=st.text(max_size=200))
    def run(tool: str, args: dict[str, Any], call_id: str) -> None:
        nonlocal sid, token
        call = (
            field_bytes(1, call_id.encode("utf-8", "surrogatepass"))
            + field_bytes(2, tool.encode())
            + field_bytes(3, struct_bytes(args))
        )
        request = (
            field_bytes(1, sid.encode()) + field_bytes(2, token.encode()) + field_bytes(3, call)
        )
        try:
            reply = agent_pb2.CallToolResponse.FromString(
                target.unary("AgentService/CallTool", request)
            )
            reached.add(tool)
            assert reply.result.tick > 0
            if reply.result.phase != common_pb2.EPISODE_PHASE_RUNNING:
                sid, token = fresh()
        except grpc.RpcError as exc:
            check_status(exc.code(), exc.details() or "", b"")
            if (
                "EPISODE_OVER" in (exc.details() or "")
                or exc.code() == grpc.StatusCode.FAILED_PRECONDITION
            ):
                sid, token = fresh()
            elif exc.code() == grpc.StatusCode.INVALID_ARGUMENT:
                reached.add(tool)

    run()
    assert len(reached) >= len(TOOL_NAMES) // 2, reached


def test_connect_streams_of_hostile_requests_get_in_band_errors(target: Target):
    method = target.channel.stream_stream("/metasre.v1.AgentService/Connect")

    @settings(FUZZ, max_examples=40)
    @given(
        first=st.sampled_from(["join", "resume", "junk"]),
        seat=st.integers(0, 3),
        rest=st.lists(wire(target, agent_pb2.ConnectRequest.DESCRIPTOR), max_size=5),
    )
    def run(first: str, seat: int, rest: list[bytes]) -> None:
        sid, tokens = target.sessions[seat % len(target.sessions)]
        opening = []
        if first == "join":
            opening = [
                agent_pb2.ConnectRequest(
                    join=agent_pb2.JoinSeat(session_id=sid, join_token=tokens[seat % 2])
                ).SerializeToString()
            ]
        elif first == "resume":
            opening = [
                agent_pb2.ConnectRequest(
                    resume=agent_pb2.ResumeSeat(
                        session_id=sid, resume_token=tokens[seat % 2], after_sequence=-seat
                    )
                ).SerializeToString()
            ]
        requests = opening + rest
        try:
            for raw in method(iter(requests), timeout=DEADLINE):
                response = agent_pb2.ConnectResponse.FromString(raw)
                if response.HasField("error"):
                    check_in_band(response.error)
        except grpc.RpcError as exc:
            check_status(exc.code(), exc.details() or "", b"".join(requests)[:200])

    run()


def test_watch_answers_hostile_requests_and_follows_real_sessions(target: Target):
    method = target.channel.unary_stream("/metasre.v1.WatchService/WatchSession")
    live = {s for s, _ in target.sessions}

    @settings(FUZZ, max_examples=30)
    @given(payload=wire(target, watch_pb2.WatchSessionRequest.DESCRIPTOR))
    def run(payload: bytes) -> None:
        try:
            request = watch_pb2.WatchSessionRequest.FromString(payload)
        except Exception:
            request = None
        following = request is not None and request.session_id in live
        try:
            for _ in method(payload, timeout=1.0 if following else DEADLINE):
                pass
        except grpc.RpcError as exc:
            if following and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return  # a live session is followed until it closes
            check_status(exc.code(), exc.details() or "", payload)

    run()


def test_after_all_that_the_server_serves_and_logged_no_internal_error(target: Target):
    health = health_pb2_grpc.HealthStub(target.channel)
    reply = health.Check(health_pb2.HealthCheckRequest(), timeout=DEADLINE)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert target.proc.poll() is None
    events = [
        json.loads(line) for line in target.log.read_text().splitlines() if line.startswith("{")
    ]
    bad = [e for e in events if e.get("level") in ("error", "critical")]
    assert not bad, bad[:3]
