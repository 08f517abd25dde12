"""The sequencer of one session: applies calls one at a time under the session's turn policy.

One task per session takes calls from a queue and applies them to the episode in a worker
thread (a test run awaits a subprocess there), so the event loop, and every other session,
keeps going. Each applied call gets the next tick; its events go to the session's log in order.

With a trajectory store, each step's entries are flushed (committed) before its calls resolve, so
CallTool answers and Connect results only ever report stored calls. A store failure fails the
step's calls and everything queued with STORE_UNAVAILABLE and hands the session to `on_failed`
(the registry closes it); see `metasre.service.core.session`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic import BaseModel

from ...simulator import Episode, EpisodePhase, Observation, StepResult, resolve, views
from ...simulator.catalog import Catalog
from ...simulator.errors import InvalidToolCallError
from ...simulator.replay import RecordedCall
from ...simulator.tools import Tool, get_tool, validate_args
from ...simulator.views import View
from .attribution import (
    Attribution,
    credit,
    final_rewards,
    step_rewards,
)
from .errors import (
    CallIdReusedError,
    EpisodeEndedError,
    EpisodeResetError,
    OutsideViewError,
    ServerHandingOverError,
    ServiceError,
    SessionClosedError,
    StoreUnavailableError,
    ToolNotAllowedError,
)
from .events import Applied, Ended, LogEntry, Message, Reward, Started
from .session import REWARD_DIGITS, Seat, Session
from .turns import TIMED_OUT, TimedOut, turns_for

log = structlog.get_logger("metasre.service.core.coordinator")

Outcome = tuple[StepResult, Observation] | BaseException

STOP_POLL_SECONDS = 0.05
"""How often `Coordinator.stop` cancels again a sequencer that has not ended yet."""


def _check_same_call(
    done: LogEntry, seat: Seat, call_id: str, tool: str, args: Mapping[str, Any]
) -> None:
    """Refuse a repeated call_id that names another call than the one it was given to.

    A retry is the same call sent again: it gets the original's result. The same id with
    another tool or other arguments is a client's mistake, and answering it with an earlier
    result of something else would hide it.

    Raises:
        CallIdReusedError: naming the call the id was given to.
    """
    event = done.event
    assert isinstance(event, Applied)
    same = event.tool == tool
    if same:
        try:
            same = validate_args(get_tool(tool), args).model_dump() == dict(event.args)
        except InvalidToolCallError:  # an unknown tool too
            same = False
    if not same:
        raise CallIdReusedError(
            f"call_id {call_id[:128]!r} of seat {seat.agent_id!r} was already given to a "
            f"{event.tool} call (tick {event.tick}) with other arguments or another tool; send "
            "that call again to get its result, or use a new call_id for a new call",
            (("call.call_id", "an id not used by another call of this seat in this episode"),),
            {"tool": event.tool, "tick": str(event.tick)},
        )


@dataclass(slots=True)
class Pending:
    """A call waiting for the sequencer."""

    seat: Seat
    call_id: str
    tool: str
    args: Mapping[str, Any]
    future: asyncio.Future[LogEntry] = field(repr=False)


class Coordinator:
    """Applies one session's calls in order; see the module docstring.

    Args:
        session: The session whose episode it drives.
        catalog: What the episodes it makes (reset, counterfactual replays) are made with.
        on_failed: Called once if the store cannot record the session (to close it).
    """

    def __init__(
        self,
        session: Session,
        catalog: Catalog | None = None,
        on_failed: Callable[[Session], None] | None = None,
    ) -> None:
        self.session = session
        self._catalog = catalog
        self._on_failed = on_failed
        self._queue: asyncio.Queue[Pending | None] = asyncio.Queue()
        self._waiting: set[str] = set()
        """Agents with a call submitted and not yet resolved."""
        self._task: asyncio.Task[None] | None = None
        self._inflight: asyncio.Task[None] | None = None
        self.turns = turns_for(session)
        """The session's turn policy (`metasre.service.core.turns`)."""
        self._stop_error: ServiceError = SessionClosedError(f"session {session.id} was closed")
        self._stopping = False
        """`stop` has begun: the sequencer takes no further step."""
        self._bound: Any = None

    @property
    def _log(self) -> Any:
        # Bound on first use: most sessions log nothing of their own before they are closed,
        # and binding costs a logger per session (structlog's proxy builds one on each bind).
        if self._bound is None:
            self._bound = log.bind(session_id=self.session.id)
        return self._bound

    # -- life -------------------------------------------------------------------------------

    def start(self) -> None:
        """Announce the episode and start sequencing."""
        s = self.session
        s.append(0, Started(episode=s.episode_no, seed=s.seed, observation=s.episode.observation()))
        self._stopping = False
        self.turns.open()
        self._task = asyncio.create_task(self._run(), name=f"sequencer-{s.id}")

    async def stop(self, error: ServiceError) -> None:
        """Stop sequencing: a call being applied finishes; every other waiting call fails.

        They fail with `error`, at once: those queued and those gathered into an open
        SIMULTANEOUS round. Returns once the sequencer has ended, whatever moment the stop
        caught it at.
        """
        self._stop_error = error
        self._stopping = True
        task, self._task = self._task, None
        if task is not None:
            self._queue.put_nowait(None)  # wakes a sequencer between awaits, too
            # Cancelled until it ends: a cancellation that lands just as a call is taken off the
            # queue can be swallowed (Python 3.11's wait_for did so, and hung shutdowns); the
            # `_stopping` check at the top of each step ends it then. asyncio.wait, unlike
            # awaiting the task, never mistakes this caller's own cancellation for the task's.
            while not task.done():
                task.cancel()
                await asyncio.wait((task,), timeout=STOP_POLL_SECONDS)
            if not task.cancelled() and task.exception() is not None:
                self._log.error("sequencer_failed", error=repr(task.exception()))
        if self._inflight is not None:
            # Its calls are resolved either way; a store failure was handled by the sequencer.
            inflight = self._inflight
            await asyncio.wait((inflight,))
            if not inflight.cancelled():
                inflight.exception()
        for gathered in self.turns.gathered():
            self.fail(gathered, error)
        while not self._queue.empty():
            pending = self._queue.get_nowait()
            if pending is not None:
                self.fail(pending, error)
        self._waiting.clear()

    async def reset(self, seed: int) -> None:
        """Start a new episode with `seed`; calls not yet applied fail."""
        await self.stop(
            EpisodeResetError(
                "the session was reset before this call was applied; nothing of it reached the "
                "world: send it again to play it in the new episode"
            )
        )
        s = self.session
        # What the old episode's sequencer had not committed yet (a turn that passed); then the
        # session stops holding it (the store does).
        try:
            await s.flush()
        except StoreUnavailableError as exc:
            self._store_failed(exc)
            raise
        s.forget_past()
        async with s.lock:
            episode = await make_episode(s.spec.scenario_id, seed, self._catalog)
        s.start_episode(episode, seed)
        self._log.info("episode_reset", episode=s.episode_no, seed=seed)
        self.start()
        try:
            await s.flush()
        except StoreUnavailableError as exc:
            self._store_failed(exc)
            raise

    def resume(self, turn: int, round_no: int, *, pass_turn: bool) -> None:
        """Carry on a session rebuilt from the store (`metasre.service.store.recovery`).

        Its log and episode are in place; `turn` is the seat whose turn the log last granted
        (ROUND_ROBIN), `round_no` the last round opened (SIMULTANEOUS). `pass_turn`: a call was
        applied in that turn or round and the crash came before the next was granted.
        """
        s = self.session
        self._stopping = False
        self.turns.resume(turn, round_no, pass_turn=pass_turn)
        self._task = asyncio.create_task(self._run(), name=f"sequencer-{s.id}")

    def wake(self) -> None:
        """Let the sequencer look again at who is live (a seat's stream ended)."""
        self._queue.put_nowait(None)

    # -- calls ------------------------------------------------------------------------------

    def _check_agents_named(self, tool: Tool, args: BaseModel) -> None:
        """Refuse agent ids that no seat of the session has (see `Tool.names_agents`)."""
        if tool.names_agents is None:
            return
        known = [seat.agent_id for seat in self.session.seats]
        unknown = sorted(set(getattr(args, tool.names_agents) or ()) - {*known, "*"})
        if unknown:
            agents = ", ".join(known)
            raise InvalidToolCallError(
                f"{tool.name}: no agent {', '.join(map(repr, unknown))} in session "
                f"{self.session.id}; its agents are {agents} ('*' for all)",
                tool.name,
                ((tool.names_agents, f"unknown agent ids; valid choices: {agents}, '*'"),),
            )

    async def submit(
        self, seat: Seat, call_id: str, tool: str, args: Mapping[str, Any]
    ) -> LogEntry:
        """Queue a call and wait until it is applied; returns its log entry.

        Raises:
            SessionClosedError, EpisodeEndedError, ToolNotAllowedError, NotYourTurnError:
                the call was refused before it was queued.
            InvalidToolCallError, UnknownToolError: the tool or its arguments are wrong.
        """
        if call_id:
            # A repeated call_id (a retry after a reconnect or a restart) is never applied
            # twice: it gets the original's result, or waits for the original.
            self._check_open()
            done = seat.results.get(call_id)
            if done is None and (original := seat.queued.get(call_id)) is not None:
                done = await asyncio.shield(original)
            if done is not None:
                _check_same_call(done, seat, call_id, tool, args)
                return done
        return await asyncio.shield(self.enqueue(seat, call_id, tool, args))

    def repeats(self, seat: Seat, call_id: str) -> bool:
        """Whether `call_id` was already given to a call of `seat` (applied or queued)."""
        return bool(call_id) and (call_id in seat.results or call_id in seat.queued)

    def enqueue(
        self, seat: Seat, call_id: str, tool: str, args: Mapping[str, Any]
    ) -> asyncio.Future[LogEntry]:
        """Queue a new call (its `call_id` not given before: see `repeats`).

        The future resolves with the call's log entry once applied and stored, or with the
        error that failed it. `submit` waits on it; a Connect stream, whose results come from
        the log, only watches it for an error, without a task per call. Cancelling the future
        does not withdraw the call: a caller that stops waiting shields it instead.

        Raises:
            the refusals `submit` lists, at once (nothing was queued).
        """
        s = self.session
        self._check_open()
        assert not self.repeats(seat, call_id), "a repeated call_id goes through submit"
        if s.episode.phase is not EpisodePhase.RUNNING:
            raise EpisodeEndedError(
                f"episode {s.episode_no} of session {s.id} is {s.episode.phase.value}; "
                "ResetSession starts a new one"
            )
        spec_tool = get_tool(tool)
        parsed = validate_args(spec_tool, args)
        self._check_agents_named(spec_tool, parsed)
        tools = s.tools_of(seat)
        if tools and tool not in tools:
            allowed = ", ".join(sorted(tools))
            raise ToolNotAllowedError(
                f"seat {seat.agent_id!r}"
                + (f" (role {seat.spec.role!r})" if seat.spec.role else " (no role)")
                + f" may not use {tool[:64]!r}; it may use: {allowed}",
                (("tool", f"allowed for this role: {allowed}"),),
                {"allowed": allowed},
            )
        view = s.view_of(seat)
        # Most seats see everything: nothing to check, and no arguments to dump for it.
        why = "" if view.full else views.refusal(view, spec_tool, parsed.model_dump(), s.owners)
        if why:
            raise OutsideViewError(
                f"seat {seat.agent_id!r}: {why}",
                (("args" if spec_tool.service_args else "tool", why),),
                {"view": view.describe()},
            )
        agent = seat.agent_id
        self.turns.admit(seat, agent in self._waiting)
        future: asyncio.Future[LogEntry] = asyncio.get_running_loop().create_future()
        self._waiting.add(agent)
        if call_id:
            seat.queue(call_id, future)

        def resolved(done: asyncio.Future[LogEntry]) -> None:
            # Once resolved, not when the caller stops waiting: a dropped stream's call stays
            # queued (and is applied), and its agent's retry waits for it.
            self._waiting.discard(agent)
            seat.unqueue(call_id, done)
            if not done.cancelled():
                done.exception()

        future.add_done_callback(resolved)
        self._queue.put_nowait(Pending(seat, call_id, tool, dict(args), future))
        return future

    def _check_open(self) -> None:
        """Refuse a call to a session that takes none now (failed, handed over, closed)."""
        s = self.session
        s.touch()
        if s.failure is not None:
            raise StoreUnavailableError(s.failure)
        if s.handed_over is not None:
            raise ServerHandingOverError(s.handed_over)
        if s.closed or self._task is None:
            raise (
                self._stop_error
                if not s.closed
                else SessionClosedError(f"session {s.id} is closed; create a new session")
            )

    # -- the sequencer ----------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while self.session.episode.phase is EpisodePhase.RUNNING and not self._stopping:
                await self.turns.step(self)
                await self.session.flush()  # a turn that passed, a round that opened
            # The episode is over: refuse whatever is still queued.
            while not self._stopping:
                pending = await self._queue.get()
                if pending is not None:
                    self.fail(pending, EpisodeEndedError("the episode ended before this call"))
        except asyncio.CancelledError:
            raise
        except StoreUnavailableError as exc:
            self._store_failed(exc)
        except Exception:  # a bug in the sequencer must not pass silently
            self._log.exception("sequencer_crashed")
            raise

    # -- what the turn policy uses (`metasre.service.core.turns.Sequencer`) ------------------------

    @property
    def stopping(self) -> bool:
        """A stop has begun: the turn policy takes no further step."""
        return self._stopping

    async def next(self, timeout: float | None) -> Pending | TimedOut | None:
        """The next queued item, or `TIMED_OUT` after `timeout` seconds (None: no limit).

        asyncio.timeout, not wait_for: Python 3.11's wait_for returns an item that arrived just
        as the task was cancelled and drops the cancellation, which kept stopped sequencers alive.
        """
        if timeout is None:  # FREE_FOR_ALL waits so on every call: no Timeout to make
            return await self._queue.get()
        try:
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except TimeoutError:
            return TIMED_OUT

    async def apply(
        self, batch: Sequence[Pending], round_no: int, then: Callable[[], None] | None = None
    ) -> None:
        """Apply `batch` in order (as one round when `round_no`), logged and answered.

        `then` runs once their entries are in the log, before the commit (see `Sequencer`).
        """
        # Shielded: once calls reach the world they are finished and logged, even if the
        # sequencer is being stopped, so nothing applied is ever lost.
        self._inflight = asyncio.create_task(self._apply_logged(batch, round_no, then))
        try:
            await asyncio.shield(self._inflight)
        finally:
            if self._inflight.done():
                self._inflight = None

    async def _apply_logged(
        self, batch: Sequence[Pending], round_no: int, then: Callable[[], None] | None
    ) -> None:
        s = self.session
        calls = [(p.seat.agent_id, p.tool, p.args, s.view_of(p.seat)) for p in batch]
        started = time.perf_counter()
        async with s.lock:
            if _quick(s.episode, calls):
                # A read-only look that cannot end the episode takes about a millisecond of
                # CPU: handing it to a thread costs more than it saves (wake-ups, GIL).
                outcomes = _apply_sync(s.episode, calls, round_no)
            else:
                outcomes = await asyncio.to_thread(_apply_sync, s.episode, calls, round_no)
        entries: list[LogEntry | BaseException] = []
        for pending, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                entries.append(outcome)
                continue
            entries.append(self._record(pending, outcome, round_no))
        if then is not None and not self._stopping:
            then()
        if s.episode.phase is not EpisodePhase.RUNNING:
            await self._finish()
        try:
            await s.flush()
        except StoreUnavailableError as exc:
            for pending in batch:
                self.fail(pending, StoreUnavailableError(str(exc)))
            raise
        for pending, entry in zip(batch, entries, strict=True):
            if isinstance(entry, BaseException):
                if not isinstance(entry, Exception):
                    raise entry
                self.fail(pending, entry)
            elif not pending.future.done():
                pending.future.set_result(entry)
        self._log.debug(
            "applied",
            calls=len(batch),
            tick=s.episode.tick,
            ms=round((time.perf_counter() - started) * 1000, 2),
        )

    def _record(
        self, pending: Pending, outcome: tuple[StepResult, Observation], rnd: int
    ) -> LogEntry:
        s = self.session
        step, observation = outcome
        caller = step.agent_id
        s.record_call(
            RecordedCall(
                agent_id=caller,
                tool=step.tool,
                args=dict(step.args),
                round=rnd,
                patch=step.output.patch,
                costly=step.costly,
            )
        )
        earned = {a: dict(c) for a, c in step.reward.others.items()}
        earned[caller] = {k: v for k, v in step.reward.components.items() if k != "grade"}
        shares = step_rewards(
            s.spec.attribution, s.spec.team_spirit, s.agent_ids, earned, s.spec.reward_mode
        )
        rewards = [
            Reward(
                agent_id=agent,
                tick=step.tick,
                components=comps,
                total=round(sum(comps.values()), REWARD_DIGITS),
                source_agent_id=caller,
            )
            for agent, comps in shares.items()
        ]
        output = step.output
        entry = s.append(
            step.tick,
            Applied(
                tick=step.tick,
                agent_id=caller,
                call_id=pending.call_id,
                tool=step.tool,
                args=step.args,
                ok=step.ok,
                error_code=output.error or "",
                text=output.text,
                data=output.data,
                minutes=step.minutes,
                clock=step.clock,
                round=rnd,
                phase=step.phase,
                observation=observation,
                reward=next((r for r in rewards if r.agent_id == caller), None),
            ),
        )
        if pending.call_id:
            pending.seat.remember(pending.call_id, entry)
        if output.message is not None:
            message = output.message
            s.append(
                step.tick,
                Message(tick=step.tick, sender=caller, to=message.to, text=message.text),
            )
        for reward in rewards:
            s.seat(reward.agent_id).credit(reward.total)
            s.append(step.tick, reward)
        self._log.info("call_applied", agent_id=caller, tick=step.tick, tool=step.tool, ok=step.ok)
        return entry

    async def _finish(self) -> None:
        s = self.session
        episode = s.episode
        grade = episode.grade()
        credited = None
        if s.spec.attribution in (Attribution.DIFFERENCE, Attribution.INDIVIDUAL):
            credited = await asyncio.to_thread(
                credit,
                s.spec.attribution,
                s.spec.scenario_id,
                s.seed,
                list(s.calls),
                s.agent_ids,
                grade,
                episode.costs(),
                self._catalog,
            )
        tick = episode.tick
        for agent, comps in final_rewards(
            s.spec.attribution, s.agent_ids, grade.total, credited
        ).items():
            reward = Reward(
                agent_id=agent,
                tick=tick,
                components=comps,
                total=round(sum(comps.values()), REWARD_DIGITS),
            )
            s.seat(agent).credit(reward.total)
            s.append(tick, reward)
        totals = {seat.agent_id: seat.reward_total for seat in s.seats}
        s.append(tick, Ended(tick=tick, phase=episode.phase, grade=grade, agent_rewards=totals))
        self._log.info("episode_ended", tick=tick, grade=grade.total, phase=episode.phase.value)

    def _store_failed(self, error: StoreUnavailableError) -> None:
        """The store cannot record the session: refuse everything queued, hand it to on_failed."""
        if self._stop_error is error or isinstance(self._stop_error, StoreUnavailableError):
            return
        self._stop_error = error
        self._log.error("store_failed", error=str(error))
        while not self._queue.empty():
            pending = self._queue.get_nowait()
            if pending is not None:
                self.fail(pending, StoreUnavailableError(str(error)))
        self._waiting.clear()
        self.session.close()
        if self._on_failed is not None:
            self._on_failed(self.session)

    def fail(self, pending: Pending, error: Exception) -> None:
        """Answer `pending` with `error` without applying it (the turn policies use it too)."""
        if not pending.future.done():
            pending.future.set_exception(error)


async def make_episode(scenario_id: str, seed: int, catalog: Catalog | None) -> Episode:
    """A new episode; rendered in a worker thread only when its seed has not been rendered yet.

    Rendering a scenario for a new seed takes about 10 ms; an episode of a rendered one about
    0.3 ms, less than the hop to a thread and back costs the server.
    """
    instance = resolve(scenario_id).rendered_instance(seed)
    if instance is not None:
        return Episode(instance, catalog=catalog)
    return await asyncio.to_thread(Episode.make, scenario_id, seed, catalog=catalog)


Call = tuple[str, str, Mapping[str, Any], View]
"""A call as the sequencer applies it: agent, tool, arguments and the caller's view."""


def _quick(episode: Episode, calls: Sequence[Call]) -> bool:
    # A tool declares whether it is cheap enough to run inline (Tool.inline). The call that uses
    # the last step is graded (hidden tests run): that one goes to a thread.
    return len(calls) == 1 and get_tool(calls[0][1]).inline and episode.steps_left > 1


def _apply_sync(episode: Episode, calls: Sequence[Call], round_no: int) -> list[Outcome]:
    """Apply `calls` in order (as one round when `round_no`); runs in a worker thread."""
    out: list[Outcome] = []
    if round_no:
        episode.begin_round()
    try:
        for agent, tool, args, view in calls:
            try:
                step = episode.apply(agent, tool, args, view)
                # The caller's result shows the dashboard as its view does; the log keeps that.
                out.append((step, views.observe(view, episode.observation())))
            except Exception as exc:  # reported to that caller; the others still apply
                out.append(exc)
    finally:
        if round_no:
            episode.end_round()
    return out
