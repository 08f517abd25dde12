"""The async client SDK: control calls, and one `AgentConnection` (a Connect stream) per seat.

It uses only the generated stubs, the way a client in any language would:

    async with MetasreClient("127.0.0.1:50051") as client:
        session = await client.create_session("ad-ranking-crash", seed=7, seats=["solo"])
        async with client.agent(session.id, session.tokens["solo"]) as agent:
            print(agent.observation["title"])
            result = await agent.call("get_alerts")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import grpc
import orjson
from google.protobuf import struct_pb2

from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .errors import ClientError, ConnectionLostError, from_rpc_error, from_status
from .plain import struct_dict, to_dict
from .retry import RetryPolicy
from .views import FULL_VIEW, may_call

TURN_POLICIES = ("FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS")
ATTRIBUTIONS = ("SHARED", "INDIVIDUAL", "MIXED", "DIFFERENCE")
REWARD_MODES = ("DENSE", "SPARSE")

SeatLike = str | tuple[str, str] | tuple[str, str, Sequence[str]] | Mapping[str, Any]
"""A seat as `MetasreClient.create_session` takes it."""


def view_of(message: common_pb2.View) -> dict[str, Any]:
    """A View message as plain data: `services` (None: all) and `code`, `data`, `deploys`."""
    return {
        "services": list(message.services) or None,
        "code": not message.hide_code,
        "data": not message.hide_data,
        "deploys": not message.hide_deploys,
    }


def applied_dict(message: common_pb2.AppliedCall) -> dict[str, Any]:
    """An AppliedCall as plain data, its `data` read from data_json when the server sent that.

    The same keys in either form (no `data_json`): a policy need not know which one came.
    """
    raw = message.data_json
    if raw:
        message.ClearField("data_json")  # not copied out as base64 only to be dropped
    out = to_dict(message)
    del out["data_json"]
    if raw:
        out["data"] = orjson.loads(raw)
    return out


def seat_config(seat: Mapping[str, Any]) -> common_pb2.SeatConfig:
    """A SeatConfig from a mapping (see `MetasreClient.create_session`).

    Raises:
        ValueError: an unknown key, or no agent_id.
    """
    unknown = sorted(set(seat) - {"agent_id", "role", "allowed_tools", "view"})
    if unknown or "agent_id" not in seat:
        raise ValueError(
            "a seat mapping takes agent_id (required), role, allowed_tools and view;"
            f" got {sorted(seat)}"
        )
    config = common_pb2.SeatConfig(
        agent_id=str(seat["agent_id"]),
        role=str(seat.get("role", "")),
        allowed_tools=list(seat.get("allowed_tools", ())),
    )
    view = seat.get("view")
    if view is not None:
        bad = sorted(set(view) - set(FULL_VIEW))
        if bad:
            raise ValueError(f"a view takes services, code, data and deploys; got {bad}")
        if view.get("services") is not None and not view["services"]:
            # The wire's empty list means every service, not none: say so rather than widen it.
            raise ValueError("a view's services must name at least one; omit it for every service")
        config.view.CopyFrom(
            common_pb2.View(
                services=list(view.get("services") or ()),
                hide_code=not view.get("code", True),
                hide_data=not view.get("data", True),
                hide_deploys=not view.get("deploys", True),
            )
        )
    return config


def to_struct(data: Mapping[str, Any] | None) -> struct_pb2.Struct:
    """Plain data as a `google.protobuf.Struct`."""
    s = struct_pb2.Struct()
    s.update(dict(data or {}))
    return s


AFFINITY_KEY = "x-session-id"
"""The metadata every call about one session carries, its id: a proxy in front of a fleet can
route by it (Envoy `hash_policy: header`, gRPC ring-hash), the servers ignore it."""

ON_OTHER_SHARD = "SESSION_ON_OTHER_SHARD"
"""The ErrorInfo reason of a call that reached a server not holding its session, in a fleet;
its metadata `owner_endpoint` says where the session is."""

_FLEET_SESSION_ID = re.compile(r"^[0-9a-f]{16}-s\d{1,4}$")
"""A fleet's session ids end in -s<slot>, the slot of the shard that holds them (ShardInfo.slot
in control.proto): a shard that dies is started again on its slot and rebuilds them, so the
client waits for it (see `metasre.agents.retry`)."""


def in_fleet(session_id: str | None) -> bool:
    """Whether `session_id` is a fleet's, whose shard comes back when it dies."""
    return bool(session_id) and _FLEET_SESSION_ID.match(session_id or "") is not None


@dataclass(frozen=True, slots=True)
class SessionHandle:
    """A created session and the join token of each seat."""

    id: str
    tokens: Mapping[str, str]
    """agent_id -> join token."""
    owner_token: str = ""
    """The session's owner credential: control and watch calls on it need it (or the admin
    token). The client that created the session sends it by itself."""
    endpoint: str = ""
    """The shard that holds the session (host:port) when the server is a fleet's directory
    (`metasre serve --workers N`); empty: the server the client dials. The client sends the
    session's calls and streams there by itself."""


@dataclass(frozen=True, slots=True)
class CallResult(Mapping[str, Any]):
    """The result of one of this agent's tool calls: ToolResult's fields.

    Read like everything else the SDK hands back (an observation, a session, a grade, an inbox
    item): as a read-only mapping keyed by the proto's field names (`result["text"]`,
    `dict(result)` for JSON), and, for a call's result, as attributes too (`result.text`).
    `data` has the shape of the tool's `output_schema` when `ok`, else of its `error_schema`
    (`list_tools()`), whichever form the server sent it in (`data_json` is read into it).
    """

    call_id: str
    tick: int
    ok: bool
    text: str
    data: Mapping[str, Any]
    error_code: str
    reward: Mapping[str, Any]
    """This agent's reward for the call: agent_id, tick, components, total."""
    observation: Mapping[str, Any]
    phase: str
    """EPISODE_PHASE_RUNNING, ..._TERMINATED or ..._TRUNCATED."""

    @property
    def done(self) -> bool:
        """True once the episode has ended."""
        return not self.phase.endswith("RUNNING")

    def __getitem__(self, key: str) -> Any:
        if key not in _RESULT_FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_RESULT_FIELDS)

    def __len__(self) -> int:
        return len(_RESULT_FIELDS)


_RESULT_FIELDS = tuple(f.name for f in fields(CallResult))


@dataclass(slots=True)
class Inbox:
    """What the server pushed to this agent besides its own results, in arrival order."""

    applied: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    rewards: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    episode_end: dict[str, Any] | None = None


class MetasreClient:
    """Control plane calls and agent connections over one channel.

    A session belongs to whoever created it: the client makes one owner credential (a random
    token that never leaves it but to the server), creates every session with it and sends it
    on the calls about its sessions (grade, close, watch). Pass `owner_token` to act for the
    sessions another client created with it; with `admin_token` every session is reachable.
    `reward_mode` is the default of the sessions it creates (DENSE or SPARSE).

    Refusals that say they will pass (a server handing its sessions over, a server at
    capacity with RetryInfo) are retried by the client itself, as `retry` says (see
    `metasre.agents.retry`); `RetryPolicy.never()` raises them at once.
    """

    def __init__(
        self,
        target: str,
        *,
        admin_token: str | None = None,
        owner_token: str | None = None,
        reward_mode: str = "DENSE",
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
        retry: RetryPolicy | None = None,
    ) -> None:
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode {reward_mode!r} is not one of {REWARD_MODES}")
        self.target = target
        self._reward_mode = reward_mode
        self.retry = retry or RetryPolicy()
        """How this client and its agent connections retry passing refusals."""
        self._metadata = (("authorization", f"Bearer {admin_token}"),) if admin_token else ()
        self._admin = bool(admin_token)
        self._owner = owner_token or secrets.token_urlsafe(24)
        self._credentials = credentials
        self._options = tuple(options)
        self._home = self._dial(target)
        self._channel = self._home.channel
        self._control = self._home.control
        self._agents = self._home.agents
        self._watch = self._home.watch
        self._shards: dict[str, _Stubs] = {}
        """Channels to the shards of a fleet, by endpoint (made on first use)."""
        self._routes: dict[str, str] = {}
        """Session id -> the endpoint of the shard that holds it, when not the target."""

    def _dial(self, target: str) -> _Stubs:
        channel = (
            grpc.aio.secure_channel(target, self._credentials, self._options)
            if self._credentials is not None
            else grpc.aio.insecure_channel(target, self._options)
        )
        # The generated stubs carry no annotations; the calls below are typed by their requests.
        stubs: Any = (control_pb2_grpc, agent_pb2_grpc, watch_pb2_grpc)
        return _Stubs(
            channel,
            stubs[0].ControlServiceStub(channel),
            stubs[1].AgentServiceStub(channel),
            stubs[2].WatchServiceStub(channel),
        )

    def _learn(self, session_id: str, endpoint: str) -> None:
        """Remember which shard holds `session_id` (nothing to remember for the target)."""
        if endpoint and endpoint != self.target:
            self._routes[session_id] = endpoint

    def _stubs(self, session_id: str | None) -> _Stubs:
        """The stubs that reach the server holding `session_id` (the target's by default)."""
        endpoint = self._routes.get(session_id or "")
        if endpoint is None:
            return self._home
        stubs = self._shards.get(endpoint)
        if stubs is None:
            stubs = self._shards[endpoint] = self._dial(endpoint)
        return stubs

    def _follow(self, session_id: str, error: ClientError) -> bool:
        """Whether `error` named another shard as the session's holder (now remembered)."""
        endpoint = error.metadata.get("owner_endpoint", "")
        if error.reason != ON_OTHER_SHARD or not endpoint:
            return False
        if self._routes.get(session_id, self.target) == endpoint:
            return False  # told the same again: do not go round in circles
        self._routes[session_id] = endpoint
        return True

    async def __aenter__(self) -> MetasreClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channels (the target's, and the shards' it reached)."""
        await self._channel.close(grace=None)
        for stubs in self._shards.values():
            await stubs.channel.close(grace=None)

    async def wait_for_server(self, timeout: float | None = None) -> None:
        """Wait until the channel reaches a server: after a restart, before resuming seats.

        Raises:
            TimeoutError: no server answered within `timeout` seconds.
        """
        await asyncio.wait_for(self._channel.channel_ready(), timeout)

    @property
    def owner_token(self) -> str:
        """The owner credential of the sessions this client creates."""
        return self._owner

    def _session_metadata(self) -> tuple[tuple[str, str], ...]:
        """What calls about one session carry: the admin token, else the owner token."""
        if self._admin:
            return self._metadata
        return (("authorization", f"Bearer {self._owner}"),)

    async def _unary(self, method: str, request: Any, *, on: str | None = None) -> Any:
        """Call ControlService `method`; `on` a session: with the owner's token, at its shard."""
        metadata = self._session_metadata() if on is not None else self._metadata
        if on:
            # Affinity for proxies that route by header (Envoy hash_policy, gRPC ring hash).
            metadata = (*metadata, (AFFINITY_KEY, on))

        async def attempt(ready_within: float | None) -> Any:
            for _ in range(2):  # at most one hop: a directory or a shard names the holder
                call = getattr(self._stubs(on).control, method)
                try:
                    return await call(
                        request,
                        metadata=metadata,
                        wait_for_ready=ready_within is not None,
                        timeout=ready_within,
                    )
                except grpc.aio.AioRpcError as exc:
                    error = from_rpc_error(exc)
                    if not on or not self._follow(on, error):
                        raise error from None
            raise error

        return await self.retry.run(attempt, in_fleet=in_fleet(on))

    async def server_info(self) -> dict[str, Any]:
        """Protocol version, capabilities and limits."""
        return to_dict(await self._unary("GetServerInfo", control_pb2.GetServerInfoRequest()))

    async def list_scenarios(self) -> list[dict[str, Any]]:
        """The scenarios the server offers."""
        reply = await self._unary("ListScenarios", control_pb2.ListScenariosRequest())
        return [to_dict(s) for s in reply.scenarios]

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool: name, description and the JSON Schema of its arguments."""
        reply = await self._unary("ListTools", control_pb2.ListToolsRequest())
        return [to_dict(t) for t in reply.tools]

    async def create_session(
        self,
        scenario_id: str,
        *,
        seed: int = 0,
        seats: Sequence[SeatLike] = ("agent",),
        turn_policy: str = "FREE_FOR_ALL",
        attribution: str = "SHARED",
        team_spirit: float = 0.0,
        turn_timeout_seconds: float = 0.0,
        reward_mode: str | None = None,
        tell_seats_instance: bool = False,
    ) -> SessionHandle:
        """Create a session with `seats`, each an id, a tuple or a mapping.

        A seat is an agent id, (agent id, role[, allowed tools]), or a mapping with `agent_id`
        and optionally `role`, `allowed_tools` and `view`. A `view` is a mapping with `services`
        (a list; absent: every service) and booleans `code`, `data`, `deploys` (absent: shown),
        as `metasre.simulator.views.View`. A seat whose role names one of the scenario's roles
        gets that role's view unless it has its own.

        `reward_mode`: DENSE (shaping as each call applies) or SPARSE (the grade only, at the
        end); the client's default (DENSE unless it was made with another) when None.

        `tell_seats_instance`: tell the seats the scenario id and seed (by default they are
        told neither; this client, the owner, always sees both).
        """
        reward_mode = reward_mode or self._reward_mode
        if turn_policy not in TURN_POLICIES:
            raise ValueError(f"turn_policy {turn_policy!r} is not one of {TURN_POLICIES}")
        if attribution not in ATTRIBUTIONS:
            raise ValueError(f"attribution {attribution!r} is not one of {ATTRIBUTIONS}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode {reward_mode!r} is not one of {REWARD_MODES}")
        seat_pbs = []
        for seat in seats:
            if isinstance(seat, str):
                seat_pbs.append(common_pb2.SeatConfig(agent_id=seat))
            elif isinstance(seat, Mapping):
                seat_pbs.append(seat_config(seat))
            else:
                allowed = list(seat[2]) if len(seat) > 2 else []
                seat_pbs.append(
                    common_pb2.SeatConfig(agent_id=seat[0], role=seat[1], allowed_tools=allowed)
                )
        request = control_pb2.CreateSessionRequest(
            scenario_id=scenario_id,
            seed=seed,
            seats=seat_pbs,
            turn_policy=f"TURN_POLICY_{turn_policy}",
            reward_attribution=f"REWARD_ATTRIBUTION_{attribution}",
            team_spirit=team_spirit,
            limits=common_pb2.SessionLimits(turn_timeout_seconds=turn_timeout_seconds),
            owner_token=self._owner,
            reward_mode=f"REWARD_MODE_{reward_mode}",
            tell_seats_instance=tell_seats_instance,
            # One id per session asked for, the same on each retry (a refusal at capacity, a
            # lost answer): the server makes it once and answers every retry with it.
            request_id=secrets.token_hex(16),
        )
        reply = await self._unary("CreateSession", request)
        self._learn(reply.session.session_id, reply.session.endpoint)
        return SessionHandle(
            reply.session.session_id,
            {t.agent_id: t.join_token for t in reply.tokens},
            reply.owner_token,
            reply.session.endpoint,
        )

    async def get_session(self, session_id: str) -> dict[str, Any]:
        """The session now: its seats (each with its reward so far), phase, tick and episode."""
        reply = await self._unary(
            "GetSession",
            control_pb2.GetSessionRequest(session_id=session_id),
            on=session_id,
        )
        return to_dict(reply.session)

    @contextlib.asynccontextmanager
    async def session(self, scenario_id: str, **kwargs: Any) -> AsyncIterator[SessionHandle]:
        """A session for the block, closed when the block exits (however it exits).

        Takes what `create_session` takes. Closing frees the session's slot at once: a loop
        that opens a session per episode never holds more than one, and never meets the
        server's cap or its owner quota (`max_sessions_per_owner`). A session the server has
        already closed (released after its episode ended, or closed by its owner in the
        block) is not an error.

            async with client.session("payment-bad-deploy", seed=3, seats=["me"]) as session:
                async with client.agent(session.id, session.tokens["me"]) as agent: ...
        """
        handle = await self.create_session(scenario_id, **kwargs)
        try:
            yield handle
        finally:
            await self._close_quietly(handle.id)

    async def _close_quietly(self, session_id: str) -> None:
        """Close a session unless it is closed already (or this client's channel is)."""
        try:
            await asyncio.shield(self.close_session(session_id))
        except ClientError as exc:
            # gone already: released after its episode ended, closed, or its server stopped
            if exc.code not in ("NOT_FOUND", "FAILED_PRECONDITION", "UNAVAILABLE"):
                raise

    async def list_sessions(self) -> list[dict[str, Any]]:
        """The open sessions of this client's owner token (every one, for the admin token)."""
        # The owner's token, not a session's: ListSessions on a directory asks every shard.
        reply = await self._unary("ListSessions", control_pb2.ListSessionsRequest(), on="")
        return [to_dict(s) for s in reply.sessions]

    async def get_grade(self, session_id: str) -> dict[str, Any]:
        """The session's grade (final once the episode ended) and each agent's reward."""
        return to_dict(
            await self._unary(
                "GetGrade",
                control_pb2.GetGradeRequest(session_id=session_id),
                on=session_id,
            )
        )

    async def get_trajectory(self, session_id: str, episode: int = 0) -> list[dict[str, Any]]:
        """One episode's log, the current one for 0.

        Every applied call, reward, message, turn and the end, as plain data in the session's
        serial order.
        """
        reply = await self._unary(
            "GetTrajectory",
            control_pb2.GetTrajectoryRequest(session_id=session_id, episode=episode),
            on=session_id,
        )
        return [to_dict(e) for e in reply.events]

    async def reset_session(self, session_id: str, seed: int | None = None) -> dict[str, Any]:
        """Start the session's next episode (on `seed`, else the same seed); its seats stay.

        Each joined seat's connection follows: its `episode`, `observation` and inbox are the
        new episode's once the server's EpisodeStarted reaches it. Returns the session and the
        new page (the full view: the owner's).
        """
        request = control_pb2.ResetSessionRequest(session_id=session_id)
        if seed is not None:
            request.seed = seed
        reply = await self._unary("ResetSession", request, on=session_id)
        return {"session": to_dict(reply.session), "observation": to_dict(reply.observation)}

    async def close_session(self, session_id: str) -> None:
        """Close a session and free its seats."""
        await self._unary(
            "CloseSession",
            control_pb2.CloseSessionRequest(session_id=session_id),
            on=session_id,
        )

    async def watch(self, session_id: str, *, from_tick: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Every event of the session from `from_tick`, then live, as plain data."""
        request = watch_pb2.WatchSessionRequest(session_id=session_id, from_tick=from_tick)
        call = self._stubs(session_id).watch.WatchSession(
            request, metadata=(*self._session_metadata(), (AFFINITY_KEY, session_id))
        )
        try:
            async for response in call:
                yield to_dict(response.event)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from None

    def agent(
        self,
        session_id: str,
        join_token: str,
        *,
        batch_events: bool = True,
        data_as_json: bool = True,
    ) -> AgentConnection:
        """A Connect stream for one seat (join it with `async with` or `await join()`).

        `batch_events` asks the server for the events that become ready together in one
        message (fewer messages, the same events in the same order; see StreamOptions).
        `data_as_json` asks for the calls' data as JSON rather than a Struct: the same data,
        much cheaper to encode and read, with whole numbers as int (a Struct's are floats).
        """
        return AgentConnection(
            self._stubs(session_id).agents,
            session_id,
            join_token,
            batch_events=batch_events,
            data_as_json=data_as_json,
            retry=self.retry,
            follow=lambda error: (
                self._stubs(session_id).agents if self._follow(session_id, error) else None
            ),
            locate=lambda ready_within: self._locate(session_id, ready_within),
        )

    async def _locate(self, session_id: str, ready_within: float) -> Any:
        """Where `session_id` lives now that its shard died: a stub, or None to stay put.

        The client asks its target (the directory) again, which answers for the session once
        its shard serves again, after rebuilding its sessions from the store. Until then the
        refusal (UNAVAILABLE) is raised for the retry policy to wait on. A client that does not
        own the session (it holds a seat's join token only) cannot ask: it resumes where the
        session was.
        """
        known = self._routes.pop(session_id, None)
        try:
            reply = await self._control.GetSession(
                control_pb2.GetSessionRequest(session_id=session_id),
                metadata=(*self._session_metadata(), (AFFINITY_KEY, session_id)),
                wait_for_ready=True,
                timeout=ready_within,
            )
        except grpc.aio.AioRpcError as exc:
            if known is not None:
                self._routes[session_id] = known
            error = from_rpc_error(exc)
            if self._follow(session_id, error):
                return self._stubs(session_id).agents
            if error.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
                raise error from None
            return None
        self._learn(session_id, reply.session.endpoint)
        return self._stubs(session_id).agents


@dataclass(frozen=True, slots=True)
class _Stubs:
    """One channel and the three services' stubs on it."""

    channel: grpc.aio.Channel
    control: Any
    agents: Any
    watch: Any


@dataclass(slots=True)
class _Link:
    """One Connect stream and what waits on it; a join or resume opens a new one.

    Each holds its own: the end of a stream that a resume replaced must not fail the calls,
    nor end the requests, of the stream that replaced it.
    """

    call: Any
    requests: asyncio.Queue[agent_pb2.ConnectRequest | None]
    joined: asyncio.Future[dict[str, Any]]
    pending: dict[str, asyncio.Future[CallResult]] = field(default_factory=dict)


class AgentConnection:
    """One agent's bidirectional stream: its calls, its results, and what the team does."""

    def __init__(
        self,
        stub: agent_pb2_grpc.AgentServiceStub,
        session_id: str,
        token: str,
        *,
        batch_events: bool = True,
        data_as_json: bool = True,
        retry: RetryPolicy | None = None,
        follow: Callable[[ClientError], Any] | None = None,
        locate: Callable[[float], Awaitable[Any]] | None = None,
    ) -> None:
        self._stub = stub
        self._follow = follow
        """Given a refusal naming the shard that holds the session, the stub that reaches it
        (None: the refusal names none, or the same again)."""
        self._locate = locate
        """After the session's shard died: the stub that reaches the shard serving it now, as
        the directory says (None: where it was), waiting up to the seconds given."""
        self._in_fleet = in_fleet(session_id)
        self._retry = retry or RetryPolicy()
        self._reconnecting = asyncio.Lock()
        self._options = agent_pb2.StreamOptions(
            batch_events=batch_events, data_as_json=data_as_json
        )
        self.session_id = session_id
        self._token = token
        self._ids = itertools.count(1)
        self._prefix = secrets.token_hex(4)
        """Call ids are unique per connection: the server dedupes a seat's calls by call_id."""
        self._link: _Link | None = None
        """The current stream, once a join or resume has opened one."""
        self._reader: asyncio.Task[None] | None = None
        """The current stream's reader."""
        self._readers: set[asyncio.Task[None]] = set()
        """Every reader still running, replaced streams' too: held until they end."""
        self._lost: ClientError | None = None
        """Why the stream ended, once it has; calls fail with it until a join or resume."""
        self._news = asyncio.Condition()
        self.news = 0
        """How many pushes (results, events, errors) have arrived; see `next_news`."""
        self.inbox = Inbox()
        self.agent_id = ""
        self.role = ""
        self.view: dict[str, Any] = dict(FULL_VIEW)
        """What this seat sees, as `view_of` gives it (the full view until joined)."""
        self.resume_token = ""
        self.last_sequence = 0
        """The sequence number of the last event received: resume from here after a drop."""
        self.observation: dict[str, Any] = {}
        self.session: dict[str, Any] = {}
        """The session as it was when this seat joined (turn policy, turn holder, seats)."""
        self.episode = 0
        """The episode the seat is in: the session's at the join, the next after a reset."""

    async def __aenter__(self) -> AgentConnection:
        await self.join()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def join(self, *, resume: bool = False) -> dict[str, Any]:
        """Take the seat (or re-attach with the resume token) and wait until the server agrees.

        A server handing the session over is waited out, as the client's `RetryPolicy` says.
        """
        return await self._retry.run(
            lambda ready_within: self._open_at_holder(resume=resume, ready_within=ready_within),
            in_fleet=self._in_fleet,
        )

    async def _open_at_holder(self, *, resume: bool, ready_within: float | None) -> dict[str, Any]:
        """`_open`, once more at the shard a refusal names (a directory's, or a stale one's)."""
        try:
            return await self._open(resume=resume, ready_within=ready_within)
        except ClientError as exc:
            stub = self._follow(exc) if self._follow is not None else None
            if stub is None:
                raise
            self._stub = stub
            return await self._open(resume=resume, ready_within=ready_within)

    async def _open(self, *, resume: bool, ready_within: float | None) -> dict[str, Any]:
        """Open a stream and join on it.

        `ready_within` waits that long for a server to answer (a handover's next server
        starting) instead of failing at once.
        """
        if resume:
            first = agent_pb2.ConnectRequest(
                resume=agent_pb2.ResumeSeat(
                    session_id=self.session_id,
                    resume_token=self.resume_token,
                    after_sequence=self.last_sequence,
                    options=self._options,
                )
            )
        else:
            first = agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(
                    session_id=self.session_id, join_token=self._token, options=self._options
                )
            )
        requests: asyncio.Queue[agent_pb2.ConnectRequest | None] = asyncio.Queue()
        requests.put_nowait(first)
        call = self._stub.Connect(
            self._outgoing(requests),
            metadata=((AFFINITY_KEY, self.session_id),),
            wait_for_ready=ready_within is not None,
        )
        link = self._link = _Link(call, requests, asyncio.get_running_loop().create_future())
        self._lost = None
        reader = self._reader = asyncio.create_task(self._read(link))
        self._readers.add(reader)
        reader.add_done_callback(self._readers.discard)
        try:
            async with asyncio.timeout(ready_within):
                return await link.joined
        except ClientError as exc:
            # Refused (a wrong token, a seat taken...): end the stream in order rather than
            # leave it open on the server until its idle limit.
            requests.put_nowait(None)
            if self._link is link:
                self._lost = exc
            raise
        except BaseException:
            # Cancelled, or no server answered in time: nobody is left to end it in order.
            call.cancel()
            raise

    @staticmethod
    async def _outgoing(
        requests: asyncio.Queue[agent_pb2.ConnectRequest | None],
    ) -> AsyncIterator[agent_pb2.ConnectRequest]:
        while (request := await requests.get()) is not None:
            yield request

    @property
    def lost(self) -> ClientError | None:
        """Why the stream ended (the session closed, the server went away); None while open."""
        return self._lost

    def new_call_id(self) -> str:
        """A call id no other call of this connection has used."""
        return f"{self._prefix}-{next(self._ids)}"

    async def call(
        self, tool: str, args: Mapping[str, Any] | None = None, *, call_id: str | None = None
    ) -> CallResult:
        """Apply a tool call and wait for its result.

        A call whose connection dropped may or may not have been applied: resume
        (`join(resume=True)`) and call again with the same `call_id`; the server applies it at
        most once and answers a repeat with the original result.

        A server handing the session over (SERVER_HANDING_OVER) is waited out: the seat is
        resumed on the next server and the call sent again under its `call_id`, as the
        client's `RetryPolicy` says.

        Raises:
            ClientError: the server refused it (bad arguments, not your turn, episode over...).
            ConnectionLostError: the stream ended before the result arrived.
        """
        call_id = call_id or self.new_call_id()

        async def attempt(ready_within: float | None) -> CallResult:
            if ready_within is not None:
                await self._resume_within(ready_within)
            return await self._call_once(tool, args, call_id)

        return await self._retry.run(attempt, in_fleet=self._in_fleet)

    async def _resume_within(self, ready_within: float) -> None:
        """Resume the seat if its stream is gone, waiting up to `ready_within` for a server.

        The calls of one connection that retry together resume it once.
        """
        async with self._reconnecting:
            if self._lost is not None:
                if self._in_fleet and self._locate is not None:
                    stub = await self._locate(ready_within)
                    if stub is not None:
                        self._stub = stub
                await self._open(resume=True, ready_within=ready_within)

    async def _call_once(
        self, tool: str, args: Mapping[str, Any] | None, call_id: str
    ) -> CallResult:
        if self._lost is not None:  # nobody would ever answer it
            raise self._lost
        link = self._link
        if link is None:
            raise ClientError(
                "this connection has not joined its seat: call join() first",
                code="FAILED_PRECONDITION",
            )
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        link.pending[call_id] = future
        link.requests.put_nowait(
            agent_pb2.ConnectRequest(
                call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=to_struct(args))
            )
        )
        return await future

    async def next_news(self, seen: int, timeout: float | None = None) -> int:
        """Wait until more than `seen` pushes have arrived; returns the count (maybe on timeout).

        Pass the count you last saw, so nothing that arrived in between is missed.
        """
        async with self._news:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._news.wait_for(lambda: self.news > seen), timeout)
            return self.news

    async def _read(self, link: _Link) -> None:
        try:
            async for response in link.call:
                await self._announce(self._dispatch(response, link))
            lost: ClientError = ConnectionLostError(
                "the server closed the stream", code="CANCELLED"
            )
        except grpc.aio.AioRpcError as exc:
            lost = from_rpc_error(exc, lost=True)
        except asyncio.CancelledError:
            lost = ConnectionLostError("the connection was closed", code="CANCELLED")
        # gRPC's task that sends the requests waits on this stream's queue until it ends, and a
        # stream that died never ends it: end it here, or the task is left pending for good
        # and destroyed with the queue ("Task was destroyed but it is pending!").
        link.requests.put_nowait(None)
        if link is self._link:  # not a stream that a resume has already replaced
            self._lost = lost
        if not link.joined.done():
            link.joined.set_exception(lost)
        for future in link.pending.values():
            if not future.done():
                future.set_exception(lost)
        link.pending.clear()
        await self._announce()

    async def _announce(self, pushes: int = 1) -> None:
        async with self._news:
            self.news += pushes
            self._news.notify_all()

    def _dispatch(self, response: agent_pb2.ConnectResponse, link: _Link) -> int:
        """Take in one response of `link`; returns how many pushes it held (a batch, several)."""
        kind = response.WhichOneof("response")
        if kind == "batch":
            for event in response.batch.events:
                self._dispatch(event, link)
            self.last_sequence = max(self.last_sequence, response.sequence)
            return len(response.batch.events)
        if response.sequence:
            self.last_sequence = response.sequence
        if kind == "joined":
            joined = response.joined
            self.agent_id, self.role = joined.agent_id, joined.role
            self.view = view_of(joined.view)
            self.resume_token = joined.resume_token
            self.observation = to_dict(joined.observation)
            self.session = to_dict(joined.session)
            self.episode = int(self.session.get("episode") or 0)
            if not link.joined.done():
                link.joined.set_result(to_dict(joined))
        elif kind == "result":
            r = response.result
            result = CallResult(
                r.call_id,
                r.tick,
                r.ok,
                r.text,
                orjson.loads(r.data_json) if r.data_json else struct_dict(r.data),
                r.error_code,
                to_dict(r.reward),
                to_dict(r.observation),
                common_pb2.EpisodePhase.Name(r.phase),
            )
            self.observation = dict(result.observation) or self.observation
            future = link.pending.pop(r.call_id, None)
            if future is not None and not future.done():
                future.set_result(result)
        elif kind == "error":
            error = from_status(response.error, response.call_id)
            future = link.pending.pop(response.call_id, None)
            if future is not None and not future.done():
                future.set_exception(error)
            elif not link.joined.done():
                link.joined.set_exception(error)
        elif kind == "applied":
            self.inbox.applied.append(applied_dict(response.applied))
        elif kind == "message":
            self.inbox.messages.append(to_dict(response.message))
        elif kind == "reward":
            self.inbox.rewards.append(to_dict(response.reward))
        elif kind == "turn":
            self.inbox.turns.append(to_dict(response.turn))
        elif kind == "episode_end":
            self.inbox.episode_end = to_dict(response.episode_end)
        elif kind == "episode_start":
            started = response.episode_start
            # The join is followed by its own episode's start; a later one is a reset: a new
            # page, and nothing of the last episode's pushes (cleared in place, for whoever
            # holds the lists).
            if started.episode != self.episode:
                self.episode = started.episode
                self.observation = to_dict(started.observation)
                for pushed in (inbox := self.inbox).applied, inbox.messages, inbox.rewards:
                    pushed.clear()
                inbox.turns.clear()
                inbox.episode_end = None
        return 1

    async def abort(self) -> None:
        """Drop the stream with no goodbye, as a crashed agent or a broken network would.

        The server keeps the seat for its grace period: `join(resume=True)` takes it back.
        """
        if self._link is not None:
            self._link.call.cancel()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None

    async def close(self, timeout: float = 5.0) -> None:
        """Hang up in order: the server finishes this agent's calls and frees the seat at once.

        The requests are half-closed and the server ends the stream; only if it has not within
        `timeout` seconds is the stream cancelled, which the server takes for a dropped agent
        (the seat then waits for a resume for the grace period).
        """
        link = self._link
        if link is None:
            return
        link.requests.put_nowait(None)
        if self._reader is not None:
            reader, self._reader = self._reader, None
            try:
                await asyncio.wait_for(asyncio.shield(reader), timeout)
            except TimeoutError:
                link.call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader


__all__ = [
    "ATTRIBUTIONS",
    "FULL_VIEW",
    "REWARD_MODES",
    "TURN_POLICIES",
    "AgentConnection",
    "CallResult",
    "Inbox",
    "MetasreClient",
    "SeatLike",
    "SessionHandle",
    "applied_dict",
    "may_call",
    "seat_config",
    "to_struct",
    "view_of",
]
