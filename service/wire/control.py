"""ControlService: scenarios, tools and the life of sessions."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from metasre.v1 import common_pb2, control_pb2

from ...simulator import TOOLS, resolve, scenario_ids
from ...simulator.sandbox import isolation
from ..config import ServerConfig
from ..core.auth import (
    bearer,
    check_admin,
    check_owner,
    digest,
    is_admin,
    new_token,
    seat_join_token,
)
from ..core.coordinator import Coordinator
from ..core.errors import (
    InvalidRequestError,
    NotSessionOwnerError,
    SessionNotFoundError,
    TokenMissingError,
)
from ..core.session import Session
from ..core.shards import ELSEWHERE_KEY
from ..registry import CreateRequest, Registry
from ..store.codec import owner_from_config
from ..version import PROTOCOL_VERSION, SERVER_VERSION
from . import convert
from .status import unary

Context = grpc.aio.ServicerContext[Any, Any]

CAPABILITIES = (
    "turn_policy.free_for_all",
    "turn_policy.round_robin",
    "turn_policy.simultaneous",
    "reward_attribution.shared",
    "reward_attribution.individual",
    "reward_attribution.mixed",
    "reward_attribution.difference",
    "role_permissions",
    "connect.resume",
    "call_tool",
    "watch",
    "trajectory",
    "create_session.request_id",
)
"""What this server supports, as GetServerInfo lists it."""


def _sandbox_pb() -> control_pb2.SandboxIsolation:
    found = isolation()
    return control_pb2.SandboxIsolation(
        layers=found.layers, missing=found.missing, weak_allowed=found.weak_allowed
    )


class ControlServicer:
    """The control plane; every call checks the admin token when the server has one."""

    def __init__(self, registry: Registry, config: ServerConfig) -> None:
        self._registry = registry
        self._config = config
        # Scenarios and tools are fixed for the life of the process, and their messages are
        # costly to build (each tool's JSON Schema as a Struct: ~10 ms of CPU for all of them,
        # asked for by every rollout that seats a team): built on first use, then reused.
        self._scenarios: control_pb2.ListScenariosResponse | None = None
        self._tools: control_pb2.ListToolsResponse | None = None

    def _info(self, session: Session) -> common_pb2.SessionInfo:
        """A session as its owner sees it, with the shard that holds it in a fleet."""
        info = convert.session_pb(session)
        if self._config.shard is not None:
            info.endpoint = self._config.shard.endpoint
        return info

    def _admin(self, context: Context) -> None:
        check_admin(tuple(context.invocation_metadata() or ()), self._config.admin_token)

    def _owned(self, context: Context, session_id: str) -> tuple[Session, Coordinator]:
        """The session, once the call has shown its owner token or the admin token."""
        return self._registry.owned(
            session_id, tuple(context.invocation_metadata() or ()), self._config.admin_token
        )

    @unary(admin=True)
    async def GetServerInfo(
        self, request: control_pb2.GetServerInfoRequest, context: Context
    ) -> control_pb2.GetServerInfoResponse:
        """The protocol version, capabilities and limits."""
        return control_pb2.GetServerInfoResponse(
            protocol_version=PROTOCOL_VERSION,
            server_version=SERVER_VERSION,
            capabilities=CAPABILITIES,
            limits=convert.limits_pb(self._config.limits),
            sandbox=_sandbox_pb(),
            load=self._load(),
            shards=self._shards(),
        )

    def _load(self) -> control_pb2.ServerLoad:
        registry = self._registry
        store = registry.store
        return control_pb2.ServerLoad(
            open_sessions=len(registry.sessions()),
            closed_sessions=registry.closed_total,
            refused_sessions=registry.refused_total,
            store_commits=store.commits if store is not None else 0,
            store_problem=(store.problem or "") if store is not None else "",
        )

    def _shards(self) -> list[control_pb2.ShardInfo]:
        shard = self._config.shard
        if shard is None:
            return []
        return [
            control_pb2.ShardInfo(
                slot=shard.slot, endpoint=shard.endpoint, serving=True, load=self._load()
            )
        ]

    @unary(admin=True)
    async def ListScenarios(
        self, request: control_pb2.ListScenariosRequest, context: Context
    ) -> control_pb2.ListScenariosResponse:
        """Every registered scenario."""
        if self._scenarios is None:
            self._scenarios = control_pb2.ListScenariosResponse(
                scenarios=[convert.scenario_pb(resolve(i)) for i in scenario_ids()]
            )
        return self._scenarios

    @unary(admin=True)
    async def ListTools(
        self, request: control_pb2.ListToolsRequest, context: Context
    ) -> control_pb2.ListToolsResponse:
        """Every tool with its JSON Schema."""
        if self._tools is None:
            self._tools = control_pb2.ListToolsResponse(
                tools=[convert.tool_pb(TOOLS[name]) for name in sorted(TOOLS)]
            )
        return self._tools

    @unary(admin=True)
    async def CreateSession(
        self, request: control_pb2.CreateSessionRequest, context: Context
    ) -> control_pb2.CreateSessionResponse:
        """Open a session; one join token per seat."""
        owner = request.owner_token or new_token()
        if not (16 <= len(owner) <= 256 and owner.isascii() and owner.isprintable()):
            raise InvalidRequestError(
                "owner_token must be one CreateSession returned (16-256 printable ASCII"
                " characters), or empty for a new one",
                (("owner_token", "a token CreateSession returned, or empty"),),
            )
        request_id = convert.request_id_of(request)
        spec = convert.session_spec(request, self._config.limits)
        elsewhere = self._held_elsewhere(context)
        if request_id:
            # A retry must get the first answer's tokens: derived, not drawn (see auth).
            joins = [seat_join_token(owner, request_id, s.agent_id) for s in spec.seats]
            session = await self._registry.create(
                spec,
                digest(owner),
                request=CreateRequest.of(
                    request_id, digest(owner), convert.request_fingerprint(request)
                ),
                join_tokens=joins,
                held_elsewhere=elsewhere,
            )
            joins = [seat_join_token(owner, request_id, a) for a in session.agent_ids]
        else:
            session = await self._registry.create(spec, digest(owner), held_elsewhere=elsewhere)
            joins = [s.join_token or "" for s in session.seats]
        tokens = [
            control_pb2.SeatToken(agent_id=a, join_token=t)
            for a, t in zip(session.agent_ids, joins, strict=True)
        ]
        session.forget_join_tokens()
        return control_pb2.CreateSessionResponse(
            session=self._info(session), tokens=tokens, owner_token=owner
        )

    def _held_elsewhere(self, context: Context) -> int:
        """The sessions the creating owner holds on other shards, as the directory counted.

        Only a shard listens (a lone server has no elsewhere). The count can only tighten the
        quota, so a client that sends it itself gains nothing.
        """
        if self._config.shard is None:
            return 0
        for key, value in context.invocation_metadata() or ():
            if key == ELSEWHERE_KEY and isinstance(value, str) and value.isdigit():
                return min(int(value), self._config.limits.max_sessions_per_owner)
        return 0

    @unary()
    async def GetSession(
        self, request: control_pb2.GetSessionRequest, context: Context
    ) -> control_pb2.GetSessionResponse:
        """One session."""
        session, _ = self._owned(context, request.session_id)
        return control_pb2.GetSessionResponse(session=self._info(session))

    @unary()
    async def ListSessions(
        self, request: control_pb2.ListSessionsRequest, context: Context
    ) -> control_pb2.ListSessionsResponse:
        """The open sessions the caller owns; every one for the admin."""
        metadata = tuple(context.invocation_metadata() or ())
        sessions = self._registry.sessions()
        if not is_admin(metadata, self._config.admin_token):
            token = bearer(metadata)
            if token is None:
                raise TokenMissingError(
                    "ListSessions lists the sessions of the owner token it is given (or all,"
                    " for the admin token): send 'authorization: Bearer <token>'"
                )
            mine = digest(token)
            sessions = [s for s in sessions if s.owner_digest == mine]
        return control_pb2.ListSessionsResponse(sessions=[self._info(s) for s in sessions])

    @unary()
    async def ResetSession(
        self, request: control_pb2.ResetSessionRequest, context: Context
    ) -> control_pb2.ResetSessionResponse:
        """A new episode in the session."""
        self._owned(context, request.session_id)
        session, coordinator = self._registry.open_session(request.session_id)
        seed = request.seed if request.HasField("seed") else session.seed
        if not 0 <= seed <= convert.MAX_SEED:
            raise InvalidRequestError(
                f"seed must be in [0, {convert.MAX_SEED}], got {seed}",
                (("seed", f"an integer in [0, {convert.MAX_SEED}]"),),
            )
        await coordinator.reset(seed)
        async with session.lock:
            observation = session.episode.observation()
        return control_pb2.ResetSessionResponse(
            session=self._info(session),
            observation=convert.observation_pb(observation),
        )

    @unary()
    async def CloseSession(
        self, request: control_pb2.CloseSessionRequest, context: Context
    ) -> control_pb2.CloseSessionResponse:
        """Close a session."""
        self._owned(context, request.session_id)
        session = await self._registry.close(request.session_id)
        return control_pb2.CloseSessionResponse(session=self._info(session))

    @unary()
    async def GetGrade(
        self, request: control_pb2.GetGradeRequest, context: Context
    ) -> control_pb2.GetGradeResponse:
        """The grade and the per-agent rewards."""
        session, _ = self._owned(context, request.session_id)
        async with session.lock:
            # While the episode runs, only what the world shows: the hidden checks run once,
            # after the end, and a grade asked for before names none of their outcomes.
            grade = session.episode.provisional_grade()
        return control_pb2.GetGradeResponse(
            grade=convert.grade_pb(grade),
            agent_rewards={s.agent_id: s.reward_total for s in session.seats},
            reward_attribution=convert.attribution_pb(session.spec.attribution),
        )

    async def _stored_trajectory(
        self, context: Context, request: control_pb2.GetTrajectoryRequest
    ) -> control_pb2.GetTrajectoryResponse:
        missing = SessionNotFoundError(
            f"no session {request.session_id[:64]!r}, open or stored; ListSessions shows"
            " the open ones"
        )
        stored = await asyncio.to_thread(self._registry.stored, request.session_id)
        if stored is None:
            raise missing
        row, entries = stored
        try:
            check_owner(
                tuple(context.invocation_metadata() or ()),
                self._config.admin_token,
                owner_from_config(row.config),
            )
        except NotSessionOwnerError:
            raise missing from None  # another's session answers as one that does not exist
        current = max((e.episode for e in entries), default=1)
        episode = convert.check_episode(request.episode, current)
        return control_pb2.GetTrajectoryResponse(
            events=[convert.event_pb(e) for e in entries if e.episode == episode]
        )

    @unary()
    async def GetTrajectory(
        self, request: control_pb2.GetTrajectoryRequest, context: Context
    ) -> control_pb2.GetTrajectoryResponse:
        """One episode's log."""
        try:
            session, _ = self._owned(context, request.session_id)
        except SessionNotFoundError:
            # closed (or never here): finished work stays readable from the store
            return await self._stored_trajectory(context, request)
        episode = convert.check_episode(request.episode, session.episode_no)
        held = [e for e in session.log if e.episode == episode]
        if not held and episode < session.episode_no:
            # a past episode: the session no longer holds it, its store does
            return await self._stored_trajectory(context, request)
        return control_pb2.GetTrajectoryResponse(events=[convert.event_pb(e) for e in held])
