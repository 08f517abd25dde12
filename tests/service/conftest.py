"""A real server on 127.0.0.1:0 per test, real grpc.aio channels, and a small agent client."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer, prepare_sandbox
from metasre.simulator import resolve
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

PAY = "meta-sre/payment-bad-deploy-v2"
AD = "meta-sre/ad-ranking-crash-v2"
TIMEOUT = 20.0
"""Upper bound on any single wait in these tests; a hang fails instead of blocking CI."""


def pay_solution(seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The reference fix of the payment scenario for `seed`: rollback, then the report."""
    return [(s.tool, dict(s.args)) for s in resolve(PAY).instance(seed).spec.solution]


@pytest.fixture(scope="session", autouse=True)
def _sandbox() -> None:
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL cluster for the session (see postgres_cluster.py).

    Skipped where PostgreSQL is not installed, except in CI, whose .ci/run installs it: there a
    missing PostgreSQL fails rather than passing the PostgreSQL store untested.
    """
    try:
        from .postgres_cluster import postgres_bin, running_cluster
    except ImportError as exc:  # the postgres extra (psycopg) is missing
        reason = f"the postgres extra is not installed ({exc}): pip install -e '.[dev]'"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    if postgres_bin() is None:
        reason = "PostgreSQL is not installed (Debian's postgresql; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgres"])
def store_where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a fresh store lives, once per kind: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "t.db"
    return str(request.getfixturevalue("postgres_cluster").new_database())


@pytest.fixture
def config() -> ServerConfig:
    return ServerConfig(port=0, limits=Limits(turn_timeout_seconds=10.0), grace_seconds=1.0)


@pytest.fixture
async def server(config: ServerConfig) -> AsyncIterator[MetasreServer]:
    srv = await build_server(config)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.5)


class OwnerCredential(grpc.aio.UnaryUnaryClientInterceptor):
    """What the SDKs do for their user, done for these tests' raw stubs: one owner token per
    channel, made here, for every session created on it and sent on every call that does not
    carry an authorization of its own. Tests of ownership itself pass their own."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def details(self, details: Any) -> Any:
        metadata = list(details.metadata or ())
        if not any(k == "authorization" for k, _ in metadata):
            metadata.append(("authorization", f"Bearer {self.owner}"))
        return details._replace(metadata=grpc.aio.Metadata(*metadata))

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if isinstance(request, control_pb2.CreateSessionRequest):
            if not request.owner_token:
                mine = control_pb2.CreateSessionRequest()
                mine.CopyFrom(request)
                mine.owner_token = self.owner
                request = mine
            return await continuation(details, request)
        return await continuation(self.details(details), request)


class OwnerCredentialOnStreams(grpc.aio.UnaryStreamClientInterceptor):
    """The same credential on WatchSession (a channel takes one interceptor per kind)."""

    def __init__(self, unary: OwnerCredential) -> None:
        self.unary = unary

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self.unary.details(details), request)


def owned_channel(address: str) -> grpc.aio.Channel:
    """A channel to `address` that carries an owner credential as the SDKs do."""
    unary = OwnerCredential(secrets.token_urlsafe(24))
    return grpc.aio.insecure_channel(address, interceptors=[unary, OwnerCredentialOnStreams(unary)])


def owner_channel(address: str, owner: str) -> grpc.aio.Channel:
    """A channel to `address` whose calls carry the owner token `owner` (the same across
    server restarts)."""
    unary = OwnerCredential(owner)
    return grpc.aio.insecure_channel(address, interceptors=[unary, OwnerCredentialOnStreams(unary)])


async def health_becomes(channel: grpc.aio.Channel, want: int) -> None:
    """Until the server's health (Watch, overall) says `want`."""
    watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())

    async def until() -> None:
        async for reply in watch:
            if reply.status == want:
                return

    try:
        await asyncio.wait_for(until(), TIMEOUT)
    finally:
        watch.cancel()


@pytest.fixture
async def channel(server: MetasreServer) -> AsyncIterator[grpc.aio.Channel]:
    async with owned_channel(server.address) as ch:
        yield ch


@pytest.fixture
def control(channel: grpc.aio.Channel) -> control_pb2_grpc.ControlServiceStub:
    return control_pb2_grpc.ControlServiceStub(channel)


def struct(data: dict[str, Any] | None = None) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(data or {})
    return s


async def create(
    control: control_pb2_grpc.ControlServiceStub,
    agents: Sequence[str] = ("a", "b", "c"),
    *,
    scenario: str = PAY,
    seed: int = 0,
    policy: int = common_pb2.TURN_POLICY_FREE_FOR_ALL,
    attribution: int = common_pb2.REWARD_ATTRIBUTION_SHARED,
    team_spirit: float = 0.0,
    turn_timeout: float = 0.0,
    allowed: dict[str, list[str]] | None = None,
    metadata: Sequence[tuple[str, str]] | None = None,
) -> control_pb2.CreateSessionResponse:
    allowed = allowed or {}
    return await control.CreateSession(
        control_pb2.CreateSessionRequest(
            scenario_id=scenario,
            seed=seed,
            seats=[
                common_pb2.SeatConfig(agent_id=a, role=a, allowed_tools=allowed.get(a, []))
                for a in agents
            ],
            turn_policy=policy,  # type: ignore[arg-type]
            reward_attribution=attribution,  # type: ignore[arg-type]
            team_spirit=team_spirit,
            limits=common_pb2.SessionLimits(turn_timeout_seconds=turn_timeout),
        ),
        metadata=metadata,
    )


def details(status: Any) -> tuple[error_details_pb2.ErrorInfo, list[tuple[str, str]]]:
    """The ErrorInfo and BadRequest violations of a google.rpc.Status."""
    info = error_details_pb2.ErrorInfo()
    violations: list[tuple[str, str]] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations += [(v.field, v.description) for v in bad.field_violations]
    return info, violations


class AgentClient:
    """One agent's Connect stream: send requests, wait for responses of a kind."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._requests: asyncio.Queue[agent_pb2.ConnectRequest | None] = asyncio.Queue()
        self.call = agent_pb2_grpc.AgentServiceStub(channel).Connect(self._iterate())
        self.received: list[agent_pb2.ConnectResponse] = []
        self._next = 0
        self._calls = 0
        self.agent_id = ""

    async def _iterate(self) -> AsyncIterator[agent_pb2.ConnectRequest]:
        while (request := await self._requests.get()) is not None:
            yield request

    def send(self, request: agent_pb2.ConnectRequest) -> None:
        self._requests.put_nowait(request)

    def close(self) -> None:
        self._requests.put_nowait(None)

    async def join(self, session_id: str, token: str) -> agent_pb2.Joined:
        self.send(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=session_id, join_token=token)
            )
        )
        msg = await self.expect("joined")
        self.agent_id = msg.joined.agent_id
        return msg.joined

    def tool(self, tool: str, args: dict[str, Any] | None = None, call_id: str = "") -> str:
        self._calls += 1
        call_id = call_id or f"{self.agent_id}-{self._calls}"
        self.send(
            agent_pb2.ConnectRequest(
                call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=struct(args))
            )
        )
        return call_id

    async def receive(self) -> agent_pb2.ConnectResponse:
        if self._next < len(self.received):
            msg = self.received[self._next]
        else:
            msg = await asyncio.wait_for(self.call.read(), TIMEOUT)
            assert msg is not grpc.aio.EOF, "the stream ended"
            self.received.append(msg)
        self._next += 1
        return msg

    async def expect(
        self, kind: str, where: Callable[[agent_pb2.ConnectResponse], bool] = lambda m: True
    ) -> agent_pb2.ConnectResponse:
        """The next message of `kind` (others are kept in `received`)."""
        while True:
            msg = await self.receive()
            if msg.WhichOneof("response") == kind and where(msg):
                return msg

    async def result_or_error(self, call_id: str) -> agent_pb2.ConnectResponse:
        while True:
            msg = await self.receive()
            if msg.call_id == call_id and msg.WhichOneof("response") in ("result", "error"):
                return msg

    async def until_end(self) -> agent_pb2.ConnectResponse:
        for msg in self.received:  # it may have come before an error we waited for
            if msg.WhichOneof("response") == "episode_end":
                return msg
        return await self.expect("episode_end")

    def applied_order(self) -> list[tuple[int, str, str]]:
        """(tick, agent, tool) of every applied call this agent heard of, in arrival order."""
        out = []
        for m in self.received:
            kind = m.WhichOneof("response")
            if kind == "result":
                out.append((m.result.tick, self.agent_id, m.call_id))
            elif kind == "applied":
                out.append((m.applied.tick, m.applied.agent_id, m.applied.call_id))
        return out


async def one_call(channel: grpc.aio.Channel) -> AgentClient:
    """A one-seat session joined on a Connect stream that has had one call answered."""
    control = control_pb2_grpc.ControlServiceStub(channel)
    created = await create(control, ("a",))
    client = AgentClient(channel)
    await client.join(created.session.session_id, created.tokens[0].join_token)
    reply = await client.result_or_error(client.tool("get_alerts"))
    assert reply.result.tick == 1
    return client
