"""The directory of a fleet: one address in front of N shards, routing each call to its holder.

`metasre serve --workers N` runs N shards (full servers, each on its own port) and this
directory on the public port. It holds no session: a session's id names its shard
(`metasre.service.core.shards`), so the directory forwards each unary call on one session to the
shard that holds it, as bytes, with the caller's metadata (the shard checks the owner), and
answers a Connect stream with NOT_FOUND / SESSION_ON_OTHER_SHARD naming the holder: streams
carry the traffic, and they go to the shard itself (the SDKs follow `SessionInfo.endpoint`).

What must hold fleet-wide is settled here. A CreateSession with a `request_id` goes to the slot
its (owner, request id) hashes to, so a retry meets the shard that remembers it; one without
goes round the shards, past any at capacity. An owner's quota counts its sessions on every
shard: the directory tells the chosen shard how many the owner holds on the others (metadata
`metasre-owner-sessions-elsewhere`), and the shard refuses as it would its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn, cast

import grpc
import structlog
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from metasre.v1 import agent_pb2, control_pb2, watch_pb2

from .core.auth import digest
from .core.errors import (
    InvalidRequestError,
    ServiceError,
    SessionNotFoundError,
)
from .core.shards import ELSEWHERE_KEY, on_other_shard, slot_of
from .wire.status import abort

log = structlog.get_logger("metasre.service.directory")

_CONTROL = "metasre.v1.ControlService"
_AGENT = "metasre.v1.AgentService"
_WATCH = "metasre.v1.WatchService"

_SESSION_CALLS: dict[str, Callable[[bytes], str]] = {
    f"/{_CONTROL}/GetSession": lambda b: control_pb2.GetSessionRequest.FromString(b).session_id,
    f"/{_CONTROL}/ResetSession": lambda b: control_pb2.ResetSessionRequest.FromString(b).session_id,
    f"/{_CONTROL}/CloseSession": lambda b: control_pb2.CloseSessionRequest.FromString(b).session_id,
    f"/{_CONTROL}/GetGrade": lambda b: control_pb2.GetGradeRequest.FromString(b).session_id,
    f"/{_CONTROL}/GetTrajectory": lambda b: (
        control_pb2.GetTrajectoryRequest.FromString(b).session_id
    ),
    f"/{_AGENT}/CallTool": lambda b: agent_pb2.CallToolRequest.FromString(b).session_id,
}
"""The unary calls on one session, and how each names it."""

_PASSED_TRAILERS = ("grpc-status-details-bin", "grpc-retry-pushback-ms", "metasre-")
"""The trailers of a shard's refusal the directory passes on (the rest are gRPC's own)."""

PROBE_SECONDS = 2.0
"""How long the directory waits for a shard's GetServerInfo when it reports the fleet."""


class Directory:
    """Routes calls to the shards at `endpoints` (slot order).

    Args:
        endpoints: host:port of each shard, in slot order.
        max_sessions_per_owner: The fleet-wide quota of one owner token.
    """

    def __init__(self, endpoints: Sequence[str], *, max_sessions_per_owner: int) -> None:
        self.endpoints = tuple(endpoints)
        self.max_sessions_per_owner = max_sessions_per_owner
        self.restarts = [0] * len(self.endpoints)
        """How many times each slot's process was restarted (the supervisor counts)."""
        self._channels = [grpc.aio.insecure_channel(e) for e in self.endpoints]
        self._next = 0
        self._owners: dict[str, asyncio.Lock] = {}
        self._creating: dict[tuple[str, int], int] = {}
        """Creates on their way to a shard, per (owner digest, slot)."""

    async def close(self) -> None:
        """Close the channels to the shards."""
        for channel in self._channels:
            await channel.close(grace=None)

    # -- forwarding --------------------------------------------------------------------------

    @staticmethod
    def _metadata(context: grpc.aio.ServicerContext[Any, Any]) -> list[tuple[str, Any]]:
        return [
            (k, v)
            for k, v in (context.invocation_metadata() or ())
            if k not in ("user-agent", ELSEWHERE_KEY) and not k.startswith(("grpc-", ":"))
        ]

    async def _forward(
        self,
        slot: int,
        method: str,
        request: bytes,
        context: grpc.aio.ServicerContext[Any, Any],
        extra: Sequence[tuple[str, str]] = (),
    ) -> bytes:
        call = self._channels[slot].unary_unary(method, None, None)
        try:
            reply: bytes = await call(
                request,
                metadata=(*self._metadata(context), *extra),
                timeout=context.time_remaining(),
            )
        except grpc.aio.AioRpcError as exc:
            await _pass_refusal(context, exc)
        return reply

    async def _session_call(
        self, method: str, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        session_id = _SESSION_CALLS[method](request)
        return await self._forward(self._slot(session_id), method, request, context)

    def _slot(self, session_id: str) -> int:
        slot = slot_of(session_id)
        if slot is None or slot >= len(self.endpoints):
            raise SessionNotFoundError(
                f"no session {session_id[:64]!r} in this fleet: a fleet's session ids end in "
                f"-s<slot>, slot 0-{len(self.endpoints) - 1}; ListSessions shows yours"
            )
        return slot

    async def _any_shard(
        self, method: str, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """Ask the shards in turn until one answers (they all answer these alike)."""
        last: grpc.aio.AioRpcError | None = None
        for offset in range(len(self.endpoints)):
            slot = (self._next + offset) % len(self.endpoints)
            try:
                reply: bytes = await self._channels[slot].unary_unary(method, None, None)(
                    request, metadata=self._metadata(context), timeout=context.time_remaining()
                )
                return reply
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    await _pass_refusal(context, exc)
                last = exc
        assert last is not None
        await _pass_refusal(context, last)

    # -- the control plane -------------------------------------------------------------------

    async def create_session(
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """Place a new session on a shard, the owner's quota counted over the fleet."""
        method = f"/{_CONTROL}/CreateSession"
        parsed = control_pb2.CreateSessionRequest.FromString(request)
        n = len(self.endpoints)
        if parsed.request_id and parsed.owner_token:
            # A retry must find the shard that remembers the id: the slot is the request's.
            key = f"{digest(parsed.owner_token)}\0{parsed.request_id}".encode()
            slots = [int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % n]
        else:
            start, self._next = self._next, (self._next + 1) % n
            slots = [(start + i) % n for i in range(n)]
        if not parsed.owner_token:
            # A new owner (the shard makes its token): it holds nothing anywhere yet.
            return await self._place(slots, method, request, context, None)
        return await self._place(slots, method, request, context, parsed.owner_token)

    async def _place(
        self,
        slots: list[int],
        method: str,
        request: bytes,
        context: grpc.aio.ServicerContext[Any, Any],
        owner_token: str | None,
    ) -> bytes:
        owner = digest(owner_token) if owner_token is not None else None
        for i, slot in enumerate(slots):
            extra: tuple[tuple[str, str], ...] = ()
            if owner_token is not None and owner is not None:
                elsewhere = await self._held_elsewhere(owner_token, owner, slot)
                extra = ((ELSEWHERE_KEY, str(elsewhere)),)
            try:
                call = self._channels[slot].unary_unary(method, None, None)
                reply: bytes = await call(
                    request,
                    metadata=(*self._metadata(context), *extra),
                    timeout=context.time_remaining(),
                )
                return reply
            except grpc.aio.AioRpcError as exc:
                last = i == len(slots) - 1
                if last or not _passes_to_next(exc):
                    await _pass_refusal(context, exc)
            finally:
                if owner is not None:
                    self._done_creating(owner, slot)
        raise AssertionError("unreachable: the last slot's refusal is passed on")

    async def _held_elsewhere(self, owner_token: str, owner: str, slot: int) -> int:
        """The owner's sessions on every shard but `slot`, counting creates under way.

        Creates under way are read before the shards are listed: a create that ends while they
        are listed is then counted at least once (twice at worst, a refusal that passes), never
        missed; one owner's counts are taken one at a time, so two creates cannot both pass on
        the last free place.
        """
        lock = self._owners.setdefault(owner, asyncio.Lock())
        async with lock:
            under_way = sum(c for (o, s), c in self._creating.items() if o == owner and s != slot)
            listed = await asyncio.gather(
                *(
                    self._owner_sessions(other, owner_token)
                    for other in range(len(self.endpoints))
                    if other != slot
                )
            )
            self._creating[(owner, slot)] = self._creating.get((owner, slot), 0) + 1
        if not lock.locked() and self._owners.get(owner) is lock:
            # no one waits: forget the owner (a fleet sees many)
            with contextlib.suppress(KeyError):
                del self._owners[owner]
        return under_way + sum(listed)

    def _done_creating(self, owner: str, slot: int) -> None:
        left = self._creating.get((owner, slot), 0) - 1
        if left > 0:
            self._creating[(owner, slot)] = left
        else:
            self._creating.pop((owner, slot), None)

    async def _owner_sessions(self, slot: int, owner_token: str) -> int:
        """How many sessions the owner of `owner_token` holds on shard `slot` (0 if it is down)."""
        try:
            reply = await self._channels[slot].unary_unary(
                f"/{_CONTROL}/ListSessions",
                request_serializer=control_pb2.ListSessionsRequest.SerializeToString,
                response_deserializer=control_pb2.ListSessionsResponse.FromString,
            )(
                control_pb2.ListSessionsRequest(),
                metadata=(("authorization", f"Bearer {owner_token}"),),
                timeout=PROBE_SECONDS,
            )
        except grpc.aio.AioRpcError:
            # A shard that is down holds no session anyone can use until it is back (its
            # restart rebuilds them): counted 0, a brief chance to pass the quota by its size.
            return 0
        return len(reply.sessions)

    async def list_sessions(
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """The caller's open sessions on every shard that answers, shard by shard."""
        method = f"/{_CONTROL}/ListSessions"
        replies = await asyncio.gather(
            *(
                channel.unary_unary(method, None, None)(
                    request, metadata=self._metadata(context), timeout=context.time_remaining()
                )
                for channel in self._channels
            ),
            return_exceptions=True,
        )
        merged = control_pb2.ListSessionsResponse()
        for reply in replies:
            if isinstance(reply, grpc.aio.AioRpcError):
                if reply.code() != grpc.StatusCode.UNAVAILABLE:
                    await _pass_refusal(context, reply)
                continue  # a shard down: its sessions are listed again once it is back
            if isinstance(reply, BaseException):
                raise reply
            merged.sessions.extend(control_pb2.ListSessionsResponse.FromString(reply).sessions)
        return merged.SerializeToString()

    async def server_info(
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """A shard's answer (they share their configuration), with every shard's state."""
        first = control_pb2.GetServerInfoResponse.FromString(
            await self._any_shard(f"/{_CONTROL}/GetServerInfo", request, context)
        )
        shards = await self.shards(self._metadata(context))
        out = control_pb2.GetServerInfoResponse()
        out.CopyFrom(first)
        del out.shards[:]
        out.shards.extend(shards)
        load = out.load
        load.Clear()
        for shard in shards:
            load.open_sessions += shard.load.open_sessions
            load.closed_sessions += shard.load.closed_sessions
            load.refused_sessions += shard.load.refused_sessions
            load.store_commits += shard.load.store_commits
        problems = [
            f"shard {s.slot}: {s.load.store_problem}" for s in shards if s.load.store_problem
        ]
        load.store_problem = "; ".join(problems)
        return out.SerializeToString()

    async def shards(self, metadata: Sequence[tuple[str, Any]] = ()) -> list[control_pb2.ShardInfo]:
        """Each shard as it answers now (not serving when it does not)."""

        async def one(slot: int) -> control_pb2.ShardInfo:
            info = control_pb2.ShardInfo(
                slot=slot, endpoint=self.endpoints[slot], restarts=self.restarts[slot]
            )
            try:
                reply = await self._channels[slot].unary_unary(
                    f"/{_CONTROL}/GetServerInfo",
                    request_serializer=control_pb2.GetServerInfoRequest.SerializeToString,
                    response_deserializer=control_pb2.GetServerInfoResponse.FromString,
                )(control_pb2.GetServerInfoRequest(), metadata=metadata, timeout=PROBE_SECONDS)
            except grpc.aio.AioRpcError:
                return info
            info.serving = True
            info.load.CopyFrom(reply.load)
            return info

        return list(await asyncio.gather(*(one(s) for s in range(len(self.endpoints)))))

    # -- streams -----------------------------------------------------------------------------

    async def connect(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        """Refuse a Connect stream, naming the shard that holds its session."""
        try:
            first = agent_pb2.ConnectRequest.FromString(await anext(requests))
        except StopAsyncIteration:
            return  # the agent left without a word
        except DecodeError as exc:
            await abort(context, InvalidRequestError(f"not a ConnectRequest: {exc}"))
        which = first.WhichOneof("request")
        if which not in ("join", "resume"):
            await abort(
                context,
                InvalidRequestError(
                    "a Connect stream's first message joins or resumes a seat; got "
                    f"{which or 'nothing'}",
                    (("request", "join or resume"),),
                ),
            )
        session_id = first.join.session_id if which == "join" else first.resume.session_id
        try:
            slot = self._slot(session_id)
        except ServiceError as exc:
            await abort(context, exc)
        await abort(context, on_other_shard(session_id, slot, self.endpoints[slot]))
        yield b""  # never reached: a streaming handler is a generator

    async def watch(
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        """Relay a WatchSession from the shard that holds the session."""
        method = f"/{_WATCH}/WatchSession"
        session_id = watch_pb2.WatchSessionRequest.FromString(request).session_id
        try:
            slot = self._slot(session_id)
        except ServiceError as exc:
            await abort(context, exc)
        call = self._channels[slot].unary_stream(method, None, None)(
            request, metadata=self._metadata(context)
        )
        try:
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as exc:
            await _pass_refusal(context, exc)

    # -- serving -----------------------------------------------------------------------------

    def handlers(self) -> list[grpc.GenericRpcHandler[Any, Any]]:
        """The control, agent and watch services, as this directory serves them."""

        def unary(
            fn: Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], Awaitable[bytes]],
        ) -> grpc.RpcMethodHandler[Any, Any]:
            async def guarded(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
                try:
                    return await fn(request, context)
                except grpc.aio.AbortError:
                    raise
                except Exception as exc:
                    await abort(context, exc)

            return grpc.unary_unary_rpc_method_handler(guarded)

        def session(method: str) -> grpc.RpcMethodHandler[Any, Any]:
            return unary(lambda b, c: self._session_call(method, b, c))

        def any_shard(method: str) -> grpc.RpcMethodHandler[Any, Any]:
            return unary(lambda b, c: self._any_shard(method, b, c))

        control = {
            "GetServerInfo": unary(self.server_info),
            "ListScenarios": any_shard(f"/{_CONTROL}/ListScenarios"),
            "ListTools": any_shard(f"/{_CONTROL}/ListTools"),
            "CreateSession": unary(self.create_session),
            "ListSessions": unary(self.list_sessions),
            **{
                name: session(f"/{_CONTROL}/{name}")
                for name in (
                    "GetSession",
                    "ResetSession",
                    "CloseSession",
                    "GetGrade",
                    "GetTrajectory",
                )
            },
        }
        agents = {
            "Connect": grpc.stream_stream_rpc_method_handler(self.connect),
            "CallTool": session(f"/{_AGENT}/CallTool"),
        }
        watch = {"WatchSession": grpc.unary_stream_rpc_method_handler(self.watch)}
        return [
            grpc.method_handlers_generic_handler(_CONTROL, control),
            grpc.method_handlers_generic_handler(_AGENT, agents),
            grpc.method_handlers_generic_handler(_WATCH, watch),
        ]


def _passes_to_next(exc: grpc.aio.AioRpcError) -> bool:
    """Whether another shard may take a create this one refused (full, or down)."""
    if exc.code() == grpc.StatusCode.UNAVAILABLE:
        return True
    return exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "SERVER_AT_CAPACITY" in str(
        exc.trailing_metadata() or ""
    )


async def _pass_refusal(
    context: grpc.aio.ServicerContext[Any, Any], exc: grpc.aio.AioRpcError
) -> NoReturn:
    """End the call with a shard's refusal, as the shard gave it."""
    received = cast(Sequence[tuple[str, str | bytes]], exc.trailing_metadata() or ())
    trailers = tuple((k, v) for k, v in received if k.startswith(_PASSED_TRAILERS))
    await context.abort(exc.code(), exc.details() or "", trailing_metadata=trailers)


async def build_directory(
    directory: Directory, host: str, port: int
) -> tuple[grpc.aio.Server, int, Any]:
    """A started gRPC server for `directory` on host:port, with health and reflection.

    Returns the server, the port it bound and its health servicer.

    Raises:
        OSError: the address cannot be bound.
    """
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(directory.handlers())
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (_CONTROL, _AGENT, _WATCH, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"could not bind {host}:{port}")
    await server.start()
    for name in ("", _CONTROL, _AGENT, _WATCH):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, bound, health_servicer
