"""AgentService: one Connect stream per agent, and the unary CallTool for simple clients."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc
import structlog

from metasre.v1 import agent_pb2

from ...simulator.lru import Lru
from ..config import Limits
from ..core.auth import require_token
from ..core.coordinator import Coordinator
from ..core.errors import (
    AlreadyJoinedError,
    InvalidRequestError,
    NotJoinedError,
    SeatIdleError,
    ServerDrainingError,
    ServerHandingOverError,
    ServiceError,
    SlowReaderError,
    StoreUnavailableError,
)
from ..core.events import Applied, Ended, LogEntry, Message, Reward, Started, Turn
from ..core.projection import SeatProjection, TeammateCall
from ..core.session import Seat, Session
from ..registry import Registry
from . import convert
from .status import abort, guarded, status_of
from .undecodable import Refused

Context = grpc.aio.ServicerContext[Any, Any]
log = structlog.get_logger("metasre.service.agent")

MAX_CALL_ID = 128
"""Longest call id accepted, in characters."""

DROP_SETTLE_SECONDS = 0.005
"""How long a stream whose requests ended waits for gRPC to cancel it (a dropped client) before
it ends in order (a half-close) and frees its seat. The cancel comes in the same turn of the
loop in most drops and within 4 ms in the rest (measured on an idle machine); each orderly end
costs this much, so it is kept short (50 ms halved sequential rollouts). A drop it misses frees
the seat at once instead of keeping it: the agent's tokens take it back either way."""


class AgentServicer:
    """The agent plane."""

    def __init__(self, registry: Registry, limits: Limits) -> None:
        self._registry = registry
        self._limits = limits
        self._views = SharedViews()
        self._streams: weakref.WeakSet[AgentStream] = weakref.WeakSet()

    async def end_streams(self, error: ServiceError) -> None:
        """End every open Connect stream with `error` (the server is stopping).

        Streams of sessions have ended with their session already; this reaches the others
        (not joined yet, or refused), which gRPC's own stop would cancel without a reason.
        """
        for stream in list(self._streams):
            if stream.session is None:
                await stream.cut(error, grace=0.0)

    async def Connect(
        self, request_iterator: AsyncIterator[agent_pb2.ConnectRequest], context: Context
    ) -> AsyncIterator[Response]:
        """Join a seat, then call tools and hear the team; errors come back in-band."""
        stream = AgentStream(self._registry, self._limits, self._views, context)
        self._streams.add(stream)
        # Closed before the status goes out, so the seat is free once the client hears the end.
        async with contextlib.aclosing(stream.run(request_iterator)) as items:
            async for item in items:
                if isinstance(item, BaseException):
                    await abort(context, item)
                yield item

    async def CallTool(
        self, request: agent_pb2.CallToolRequest, context: Context
    ) -> agent_pb2.CallToolResponse:
        """One call without a stream."""

        async def op() -> agent_pb2.CallToolResponse:
            session, coordinator = self._registry.open_session(request.session_id)
            seat = session.seat_by_token(require_token(request.token))
            _check_call_id(request.call.call_id)
            entry = await coordinator.submit(
                seat,
                request.call.call_id,
                request.call.tool,
                convert.struct_to_dict(request.call.args, request.call.tool),
            )
            assert isinstance(entry.event, Applied)
            return agent_pb2.CallToolResponse(result=convert.tool_result_pb(entry.event))

        return await guarded(context, op)


AGENT_SERVICE = agent_pb2.DESCRIPTOR.services_by_name["AgentService"]


def add_agent_service(servicer: AgentServicer, server: grpc.aio.Server) -> None:
    """Register the agent plane on `server`.

    Not with the generated `add_AgentServiceServicer_to_server`: Connect's replies may be bytes
    serialized once for every stream that sends them (`SharedViews`), and its serializer sends
    those as they are.
    """
    handlers = {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect,
            request_deserializer=agent_pb2.ConnectRequest.FromString,
            response_serializer=_reply_bytes,
        ),
        "CallTool": grpc.unary_unary_rpc_method_handler(
            servicer.CallTool,
            request_deserializer=agent_pb2.CallToolRequest.FromString,
            response_serializer=agent_pb2.CallToolResponse.SerializeToString,
        ),
    }
    assert set(handlers) == {m.name for m in AGENT_SERVICE.methods}, "a method is not served"
    name = AGENT_SERVICE.full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    # As the generated code does (grpcio 1.62+ looks registered methods up without a generic
    # handler's search); the type stubs do not know it yet.
    server.add_registered_method_handlers(name, handlers)  # type: ignore[attr-defined]


def _reply_bytes(reply: Response) -> bytes:
    return reply if type(reply) is bytes else reply.SerializeToString()  # type: ignore[union-attr]


def _check_call_id(call_id: str) -> None:
    if len(call_id) > MAX_CALL_ID:
        raise InvalidRequestError(
            f"call_id is {len(call_id)} characters; at most {MAX_CALL_ID}",
            (("call.call_id", f"at most {MAX_CALL_ID} characters"),),
        )


class SharedViews:
    """The wire form of recent applied calls, built once and shared by every stream that sends it.

    Every follower of a session sends each applied call to its caller (a result) or to each
    teammate (the same AppliedCall for all of them), so converting per stream would build the
    same messages once per seat. The views are serialized bytes (the Connect handler sends bytes
    as they are), with the call's data encoded once for both. Entries are keyed by identity: all
    followers read the same LogEntry objects from the session's log; the cache holds each entry,
    so ids are not reused while they are cached.
    """

    def __init__(self, size: int = 512) -> None:
        # Followers send an entry within moments of its append, so a few hundred recent entries
        # share nearly everything; a bigger cache only keeps closed sessions' entries (each with
        # its observation and data) alive: 4096 held ~60 MB after a load test's sessions closed.
        self._views: Lru[int, list[Any]] = Lru(size)

    def _get(self, entry: LogEntry) -> list[Any]:
        # [entry, then by form (False: Struct, True: JSON) its data, and its AppliedCall].
        found = self._views.peek(id(entry))
        if found is None or found[0] is not entry:
            found = [entry, None, None, None, None]
            self._views.put(id(entry), found)
        return found

    @staticmethod
    def _data(found: list[Any], event: Applied, as_json: bool) -> bytes:
        data: bytes | None = found[1 + as_json]
        if data is None:
            data = found[1 + as_json] = (
                convert.data_json(event) if as_json else convert.data_bytes(event)
            )
        return data

    def result(self, entry: LogEntry, event: Applied, *, as_json: bool = False) -> bytes:
        """The caller's ToolResult, serialized (built per send: sent once).

        `as_json`: the data in data_json (the stream asked for it: StreamOptions.data_as_json).
        """
        data = self._data(self._get(entry), event, as_json)
        return convert.result_response_bytes(event, entry.sequence, data, as_json=as_json)

    def applied(self, entry: LogEntry, event: Applied, *, as_json: bool = False) -> bytes:
        """The teammates' AppliedCall, serialized once for all of them (of each form)."""
        found = self._get(entry)
        applied: bytes | None = found[3 + as_json]
        if applied is None:
            data = self._data(found, event, as_json)
            applied = found[3 + as_json] = convert.applied_response_bytes(
                event, entry.sequence, data, as_json=as_json
            )
        return applied


Response = agent_pb2.ConnectResponse | bytes
"""A message, or one already serialized (see `SharedViews`)."""
Item = Response | BaseException | None
"""What the writer sends: a response, an error that ends the stream, or None to end it."""


class _IdleClock:
    """Cancels the task that made it once `seconds` pass without a `touch`.

    As `asyncio.timeout` around each read would, but one timer for the whole stream, moved on
    only when it fires: a timer made and cancelled for every message cost more than the read.
    """

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._last = self._loop.time()
        self._fired = False
        self._timer: asyncio.TimerHandle | None = self._loop.call_at(
            self._last + seconds, self._check
        )

    def touch(self) -> None:
        """A message came: the idle time starts again."""
        self._last = self._loop.time()

    def _check(self) -> None:
        due = self._last + self._seconds
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._check)
            return
        self._timer = None
        self._fired = True
        self._task.cancel()

    def expired(self) -> bool:
        """Whether a cancellation the task caught was this clock's alone (then taken back)."""
        if not self._fired:
            return False
        self._fired = False
        return self._task.uncancel() == 0

    def stop(self) -> None:
        """No more reads: the clock stops."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class AgentStream:
    """One Connect stream: a reader of requests, a follower of the session log, one writer.

    Everything the agent receives about the session comes from the log, in log order, so its
    own results and the others' applied calls arrive in tick order. Errors about one request
    are written as soon as they happen and leave the stream open.
    """

    def __init__(
        self,
        registry: Registry,
        limits: Limits,
        views: SharedViews | None = None,
        context: Context | None = None,
    ) -> None:
        self._registry = registry
        self._limits = limits
        self._views = views if views is not None else SharedViews()
        self._context = context
        self._out: asyncio.Queue[Item] = asyncio.Queue()
        """What the writer sends. The follower fills it only up to `stream_buffer_messages` or
        `stream_buffer_bytes` (`_make_room`); replies to requests are few per request, and a
        client that sends requests without reading their replies is cut off past four times
        the message limit."""
        self._queued_bytes = 0
        """Bytes of the prebuilt messages in `_out` (the large ones: results, applied calls)."""
        self._room = asyncio.Event()
        """Set by the writer when it takes from a full buffer."""
        self._ended = False
        """The stream was cut off (`cut`): nothing more is sent."""
        self._finishing = False
        """The writer has returned: the call ends with its own status, `cut` stays out."""
        self._session: Session | None = None
        self._coordinator: Coordinator | None = None
        self._seat: Seat | None = None
        self._projection: SeatProjection | None = None
        """What the seat receives (`metasre.service.core.projection`): the stream encodes it."""
        self._follower: asyncio.Task[None] | None = None
        self._calls: set[asyncio.Future[Any]] = set()
        """The stream's calls not answered yet: a task for a repeated call_id (`_submit`), the
        coordinator's future for a new call (never cancelled here: the call stays queued)."""
        self._delivered = 0
        self._start = 0
        """The follower sends log entries after this sequence number."""
        self._batch = False
        """Send the events that become durable together as one EventBatch (StreamOptions)."""
        self._json = False
        """Send results' and applied calls' data as JSON (StreamOptions.data_as_json)."""
        self._orderly = False
        """The stream ends in order (client half-close, idle limit, evicted), not dropped."""
        self._progress = asyncio.Event()
        self._log = log

    async def run(
        self, requests: AsyncIterator[agent_pb2.ConnectRequest]
    ) -> AsyncGenerator[Response | BaseException, None]:
        """The stream's responses until it ends."""
        reader = asyncio.create_task(self._read(requests))
        # Whether the writer reached its end (not cancelled: a client that drops its call
        # ends the request iterator just as a half-close does, and is cancelled only after).
        finished = False
        try:
            while True:
                item = await self._out.get()
                if type(item) is bytes:
                    self._queued_bytes -= len(item)
                if not self._full():
                    self._room.set()
                if item is None or self._ended:
                    finished = True
                    return
                yield item
                if isinstance(item, BaseException):
                    finished = True
                    return
        finally:
            self._finishing = True
            reader.cancel()
            if self._follower is not None:
                self._follower.cancel()
            for task in list(self._calls):
                if isinstance(task, asyncio.Task):
                    task.cancel()
            # A dropped stream keeps the seat for its agent for the grace period.
            orderly = self._orderly and finished
            self._release(0.0 if orderly else self._limits.seat_grace_seconds)
            # The stream's tasks hold it through their frames (a cancelled one through its
            # CancelledError's traceback) and it holds them and the session: cut those links so
            # that a closed session is freed by reference counting, not by a full collection.
            self._follower = None
            self._session = self._coordinator = self._seat = self._projection = None

    @property
    def session(self) -> Session | None:
        """The session whose seat the stream holds, if it has joined one."""
        return self._session

    def evict(self) -> None:
        """Another stream resumed this seat: end this one."""
        self._orderly = True
        self._out.put_nowait(None)

    def _release(self, grace: float) -> None:
        """Let go of the seat (kept `grace` seconds for its agent); again, it does nothing."""
        session, seat = self._session, self._seat
        if session is None or seat is None or seat.holder is not self:
            return
        wake = self._coordinator.wake if self._coordinator is not None else None
        session.release(seat, self, grace, wake)
        if wake is not None:
            wake()
        self._log.info("seat_released", kept_seconds=grace)

    async def cut(self, error: ServiceError, *, grace: float) -> None:
        """End the stream now with `error`, whatever its writer is waiting for.

        The seat is let go at once (kept `grace` seconds for a resume), not when the writer
        notices: a writer blocked on a client that does not read would hold it forever. The
        status goes out through the call's context, which also ends the blocked write; the
        client reads it after whatever it had been sent.
        """
        if self._ended or self._finishing:
            return
        self._ended = True
        self._orderly = grace == 0
        self._release(grace)
        self._log.info("stream_cut", reason=type(error).__name__, kept_seconds=grace)
        if self._context is None:
            self._out.put_nowait(error)
            return
        try:
            await abort(self._context, error)
        except grpc.aio.AbortError:
            pass  # the status is out
        except Exception as exc:  # the call ended meanwhile (gRPC refuses a second status)
            self._log.debug("stream_cut_late", error=type(exc).__name__)
        self._out.put_nowait(None)

    # -- requests ---------------------------------------------------------------------------

    async def _read(self, requests: AsyncIterator[agent_pb2.ConnectRequest]) -> None:
        iterator = aiter(requests)
        idle = _IdleClock(self._limits.idle_seat_seconds)
        try:
            while True:
                try:
                    request = await anext(iterator)
                except StopAsyncIteration:
                    idle.stop()  # the clock runs only around reads
                    self._orderly = True
                    break
                except asyncio.CancelledError:
                    if not idle.expired():
                        raise
                    # Not queued behind what the writer has not sent: that would wait on a
                    # client that may read nothing either.
                    await self.cut(
                        SeatIdleError(
                            f"no message for {self._limits.idle_seat_seconds:g} s; the seat is "
                            "free again: resume it with the resume token"
                        ),
                        grace=0.0,
                    )
                    return
                idle.touch()
                self._handle(request)
            await self._flush()
            # A client that drops its call ends the request iterator just as a half-close
            # does; gRPC cancels this call a moment later. Waiting that moment before ending
            # in order keeps the seat of a dropped client for its agent, as it should be.
            await asyncio.sleep(DROP_SETTLE_SECONDS)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken client stream: end ours
            self._log.info("stream_read_failed", error=type(exc).__name__)
        finally:
            idle.stop()
        self._out.put_nowait(None)

    async def _flush(self) -> None:
        """The client half-closed: finish its calls and deliver their results before ending."""
        if self._calls:
            # asyncio.wait, not gather: a cancelled flush must not cancel the calls it waits for.
            await asyncio.wait(list(self._calls))
        if self._session is None:
            return
        target = self._session.end
        while self._delivered < target and self._follower is not None:
            if self._follower.done():
                break
            self._progress.clear()
            await self._progress.wait()

    def _handle(self, request: agent_pb2.ConnectRequest | Refused) -> None:
        if isinstance(request, Refused):
            self._error(request.call_id[:MAX_CALL_ID], request.error)
            return
        kind = request.WhichOneof("request")
        call_id = request.call.call_id[:MAX_CALL_ID] if kind == "call" else ""
        try:
            if kind == "join":
                self._join(
                    request.join.session_id,
                    request.join.join_token,
                    resume=False,
                    after=0,
                    options=request.join.options,
                )
            elif kind == "resume":
                self._join(
                    request.resume.session_id,
                    request.resume.resume_token,
                    resume=True,
                    after=request.resume.after_sequence,
                    options=request.resume.options,
                )
            elif kind == "call":
                self._call(request.call)
            else:
                raise InvalidRequestError(
                    "empty or unreadable ConnectRequest: set one of join, resume or call",
                    (("request", "one of join, resume, call"),),
                )
        except Exception as exc:
            self._error(call_id, exc)

    def _error(self, call_id: str, exc: BaseException) -> None:
        if isinstance(exc, ServerHandingOverError | ServerDrainingError):
            # Not about this request: the server is going away. The stream ends with it, so a
            # client retries (resumes) on the next server instead of waiting here.
            self._out.put_nowait(exc)
            return
        self._put(agent_pb2.ConnectResponse(call_id=call_id, error=status_of(exc, call_id=call_id)))

    def _put(self, item: Item) -> None:
        """Queue a reply to a request; a client that sends without reading is cut off."""
        if self._out.qsize() >= 4 * self._limits.stream_buffer_messages:
            if not self._ended:
                self._spawn(self.cut(self._slow_reader(), grace=self._limits.seat_grace_seconds))
            return
        self._out.put_nowait(item)

    def _slow_reader(self) -> SlowReaderError:
        return SlowReaderError(
            f"this stream's client read nothing while {self._out.qsize()} messages "
            f"({self._queued_bytes} bytes) waited for it (the limits are "
            f"{self._limits.stream_buffer_messages} messages or "
            f"{self._limits.stream_buffer_bytes} bytes, held for "
            f"{self._limits.slow_reader_seconds:g} s); the seat is kept for its agent for "
            f"{self._limits.seat_grace_seconds:g} s: resume it with the resume token and "
            "read as you go",
            metadata={
                "stream_buffer_messages": str(self._limits.stream_buffer_messages),
                "stream_buffer_bytes": str(self._limits.stream_buffer_bytes),
                "slow_reader_seconds": f"{self._limits.slow_reader_seconds:g}",
            },
        )

    def _full(self) -> bool:
        limits = self._limits
        return (
            self._out.qsize() >= limits.stream_buffer_messages
            or self._queued_bytes >= limits.stream_buffer_bytes
        )

    def _enqueue(self, item: Response) -> None:
        """Queue a log event's message for the writer, counting its bytes."""
        if type(item) is bytes:
            self._queued_bytes += len(item)
        self._out.put_nowait(item)

    async def _make_room(self) -> None:
        """Wait until the buffer is below its limits; cut the stream off if that takes too long."""
        if not self._full():
            return
        try:
            async with asyncio.timeout(self._limits.slow_reader_seconds):
                while self._full():
                    self._room.clear()
                    await self._room.wait()
        except TimeoutError:
            await self.cut(self._slow_reader(), grace=self._limits.seat_grace_seconds)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)

    def _join(
        self,
        session_id: str,
        token: str,
        *,
        resume: bool,
        after: int,
        options: agent_pb2.StreamOptions,
    ) -> None:
        if self._seat is not None:
            raise AlreadyJoinedError(
                f"this stream already holds seat {self._seat.agent_id!r}; open another stream "
                "for another seat"
            )
        session, coordinator = self._registry.open_session(session_id)
        require_token(token)
        seat = session.seat_by_token(token, join=not resume, resume=resume)
        resume_token = token if resume else session.resume_token_for(token)
        previous = seat.holder
        session.take(seat, self, force=resume)
        if isinstance(previous, AgentStream) and previous is not self:
            previous.evict()
        self._session, self._coordinator, self._seat = session, coordinator, seat
        projection = self._projection = SeatProjection(session, seat)
        self._batch = options.batch_events
        self._json = options.data_as_json
        coordinator.wake()  # a ROUND_ROBIN turn waiting without a clock starts one again
        self._log = log.bind(session_id=session.id, agent_id=seat.agent_id)
        self._log.info("seat_taken", resume=resume)
        # A join replays the current episode from its start (the page, the turns, every call so
        # far), so every agent has the whole episode in the same order; a resume picks up after
        # the last event the agent saw.
        start = session.episode_start()
        if resume and after > 0:
            start = min(int(after), session.end)
        view = projection.view
        joined = agent_pb2.Joined(
            session=convert.session_pb(session, seat=projection),
            agent_id=seat.agent_id,
            role=seat.spec.role,
            resume_token=resume_token,
            view=convert.view_pb(view),
        )
        episode = session.episode
        observation = episode.observation()
        # Before the first call it is the episode's opening, the same for every episode of its
        # scenario and seed: its bytes are made once. Later ones are never seen again.
        data = (
            convert.shared_observation_bytes(observation)
            if episode.tick == 0 and view.full
            else convert.observation_pb(projection.observation(observation)).SerializeToString()
        )
        self._enqueue(convert.joined_response_bytes(joined, data))
        self._delivered = self._start = start
        self._follower = asyncio.create_task(self._follow(session, start))

    def _call(self, call: agent_pb2.ToolCall) -> None:
        if self._seat is None or self._coordinator is None:
            raise NotJoinedError("join a seat first: the first message must be join or resume")
        _check_call_id(call.call_id)
        args = convert.struct_to_dict(call.args, call.tool)
        if self._coordinator.repeats(self._seat, call.call_id):
            task = asyncio.create_task(self._submit(self._coordinator, self._seat, call, args))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
            return
        # A new call's result reaches this stream through the log (the follower): its future
        # is only watched for a refusal, by a callback rather than a task per call. A refusal
        # raised here is answered by `_handle`.
        future = self._coordinator.enqueue(self._seat, call.call_id, call.tool, args)
        self._calls.add(future)
        future.add_done_callback(functools.partial(self._answered, call.call_id))

    def _answered(self, call_id: str, future: asyncio.Future[LogEntry]) -> None:
        """A new call's future resolved: its error, if any, goes to the stream's client."""
        self._calls.discard(future)
        if self._finishing or future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self._error(call_id, error)

    async def _submit(
        self, coordinator: Coordinator, seat: Seat, call: agent_pb2.ToolCall, args: Any
    ) -> None:
        repeat = bool(call.call_id) and (
            call.call_id in seat.results or call.call_id in seat.queued
        )
        try:
            entry = await coordinator.submit(seat, call.call_id, call.tool, args)
            if (
                repeat
                and isinstance(entry.event, Applied)
                and entry.sequence <= max(self._start, self._delivered)
            ):
                # A repeated call_id answered with the original result, which this stream's
                # follower will not send (again): it was applied before the stream's starting
                # point, or the follower already sent it.
                self._put(
                    agent_pb2.ConnectResponse(
                        call_id=call.call_id,
                        result=convert.tool_result_pb(entry.event, as_json=self._json),
                    )
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._error(call.call_id, exc)

    # -- the log ----------------------------------------------------------------------------

    async def _follow(self, session: Session, start: int) -> None:
        async for run in session.follow_runs(start):
            messages: list[Response] = []
            last = 0
            for entry in run:
                message = self._view(entry)
                if message is not None:
                    if not isinstance(message, bytes):  # shared views come with it set
                        message.sequence = entry.sequence
                    messages.append(message)
                    last = entry.sequence
            if self._batch and len(messages) > 1:
                # One write instead of several: gRPC's cost is mostly per message.
                if self._full():  # a coroutine only when the buffer is full
                    await self._make_room()
                if self._ended:
                    return
                self._enqueue(
                    convert.batch_response_bytes(
                        [m if isinstance(m, bytes) else m.SerializeToString() for m in messages],
                        last,
                    )
                )
            else:
                for message in messages:
                    if self._full():
                        await self._make_room()
                    if self._ended:
                        return
                    self._enqueue(message)
            self._delivered = run[-1].sequence
            self._progress.set()
        # The session is closed: its coordinator has answered every call it held (applied or
        # aborted), so waiting for this stream's calls is short, and each is told its fate
        # before the stream ends.
        if self._calls:
            await asyncio.wait(list(self._calls))
        # A session the store could not record, or left in the store for the next server,
        # ends its streams with that status.
        if session.failure is not None:
            self._out.put_nowait(StoreUnavailableError(session.failure))
        elif session.handed_over is not None:
            self._out.put_nowait(ServerHandingOverError(session.handed_over))
        elif session.drained is not None:
            self._out.put_nowait(ServerDrainingError(session.drained))
        else:
            self._out.put_nowait(None)

    def _view(self, entry: LogEntry) -> Response | None:
        """The wire form of what this seat is told of one log entry, if anything."""
        assert self._seat is not None and self._projection is not None
        event = entry.event
        seen = self._projection.event(event)
        if seen is None:
            return None
        if isinstance(seen, Applied):
            if seen.agent_id == self._seat.agent_id:
                return self._views.result(entry, seen, as_json=self._json)
            return self._views.applied(entry, seen, as_json=self._json)
        if isinstance(seen, TeammateCall):
            return convert.teammate_call_response_bytes(seen, entry.sequence)
        if isinstance(seen, Reward):
            return agent_pb2.ConnectResponse(reward=convert.reward_pb(seen))
        if isinstance(seen, Message):
            return agent_pb2.ConnectResponse(message=convert.message_pb(seen))
        if isinstance(seen, Turn):
            return agent_pb2.ConnectResponse(turn=convert.turn_pb(seen))
        if isinstance(seen, Started):
            assert isinstance(event, Started)
            if seen.observation is event.observation:
                # The episode's opening, whose bytes every seat that sees all of it shares.
                return convert.started_response_bytes(seen, entry.sequence)
            return agent_pb2.ConnectResponse(
                sequence=entry.sequence, episode_start=convert.started_pb(seen)
            )
        assert isinstance(seen, Ended)
        return agent_pb2.ConnectResponse(episode_end=convert.ended_pb(seen))


__all__ = ["AgentServicer", "AgentStream", "add_agent_service"]
