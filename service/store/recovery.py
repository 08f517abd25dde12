"""Rebuilding the open sessions of a trajectory store after the server died (SIGKILL, OOM, power).

A session in the store with no close is one the server never finished. On startup, before it
serves, the server rebuilds each of them:

- the log is read back as it was committed: every event an agent, a watcher or a CallTool
  answer was ever shown, with its sequence number, so resumes (`after_sequence`) and watchers
  carry on where they were;
- the world is rebuilt by replaying the current episode's applied calls, in their order and
  rounds, on a fresh episode of the same scenario and seed (the simulator is deterministic);
  each replayed call must land on the tick, outcome, phase and clock it was stored with, or the
  session is not recovered (closed in the store, its trajectory kept);
- seats get back their token digests and resume-token key, so join and resume tokens handed
  out before the crash still work, and each seat's applied calls by call_id, so a call retried
  after the restart returns its original result instead of being applied again;
- rewards so far, the counterfactual calls of DIFFERENCE and the turn or round are restored; a
  turn or round that the crash kept from passing is passed now.

What was never committed was never acknowledged (see `metasre.service.core.session`): a call in
flight at the crash either is in the log (its retry gets the stored result) or is not (its retry
applies it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ...simulator import Episode, EpisodePhase, StepResult
from ...simulator.catalog import Catalog
from ...simulator.replay import RecordedCall, replay
from ..core.coordinator import Coordinator, make_episode
from ..core.events import Applied, Ended, Reward, Started, Turn
from ..core.session import Recorder, Session
from .codec import (
    entry_of,
    keys_from_config,
    owner_from_config,
    spec_from_config,
)
from .contract import EventRow, SessionRow


class RecoveryError(Exception):
    """Raised when a stored session cannot be rebuilt faithfully."""


async def rebuild(
    row: SessionRow,
    rows: Sequence[EventRow],
    recorder: Recorder | None,
    catalog: Catalog | None,
    on_failed: Callable[[Session], None] | None,
) -> tuple[Session, Coordinator]:
    """The session `row` and its stored events describe, rebuilt and sequencing again.

    Raises:
        RecoveryError: the stored session is incomplete, or replaying it diverged.
    """
    try:
        spec = spec_from_config(row.config)
        key, digests = keys_from_config(row.config)
        entries = [entry_of(r) for r in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise RecoveryError(f"its stored config or log is unreadable ({exc!r})") from exc
    if [e.sequence for e in entries] != list(range(1, len(entries) + 1)):
        raise RecoveryError("its stored log has gaps")
    if not entries:
        raise RecoveryError("it has no stored events")
    number = entries[-1].episode
    current = [e for e in entries if e.episode == number]
    started = current[0].event
    if not isinstance(started, Started) or started.episode != number:
        raise RecoveryError(f"episode {number} has no start")
    episode = await make_episode(spec.scenario_id, started.seed, catalog)
    applied = [e.event for e in current if isinstance(e.event, Applied)]
    replayed = iter(await asyncio.to_thread(_replay, episode, applied))
    ended = any(isinstance(e.event, Ended) for e in current)
    if ended == (episode.phase is EpisodePhase.RUNNING):
        raise RecoveryError(
            f"the replayed episode is {episode.phase.value} but the log "
            + ("ended it" if ended else "did not end it")
        )

    session = Session(
        row.session_id, spec, episode, recorder, owner_digest=owner_from_config(row.config)
    )
    session.restore_episode(started.seed, number, row.created_at)
    session.restore_keys(key, [(join, resume) for join, resume in digests])
    session.restore(entries)
    turn, round_no, passed = 0, 0, False
    for entry in current:
        event = entry.event
        if isinstance(event, Applied):
            seat = session.seat(event.agent_id)
            step = next(replayed, None)
            session.record_call(
                RecordedCall(
                    agent_id=event.agent_id,
                    tool=event.tool,
                    args=event.args,
                    round=event.round,
                    patch=step.output.patch if step else None,
                    costly=step.costly if step else False,
                )
            )
            if event.call_id:
                seat.remember(event.call_id, entry)
            passed = True
        elif isinstance(event, Reward):
            session.seat(event.agent_id).credit(event.total)
        elif isinstance(event, Turn):
            if event.agent_id:
                turn = session.agent_ids.index(event.agent_id)
            round_no, passed = event.round, False
    coordinator = Coordinator(session, catalog, on_failed)
    coordinator.resume(turn, round_no, pass_turn=passed)
    await session.flush()  # a turn passed now
    return session, coordinator


def _replay(episode: Episode, calls: Sequence[Applied]) -> list[StepResult]:
    """Apply the stored calls in order, SIMULTANEOUS rounds as rounds; check each lands the same.

    Returns each call's step as the replay applied it: whether it was costly
    (`RecordedCall.costly`) and the patch of an edit are read from it.
    """
    stored = iter(calls)  # an exact replay checks every call, in order
    steps: list[StepResult] = []

    def check(_recorded: RecordedCall, step: StepResult) -> None:
        call = next(stored)
        got = (step.tick, step.ok, step.output.error or "", step.phase, step.clock)
        want = (call.tick, call.ok, call.error_code, call.phase, call.clock)
        if got != want:
            raise RecoveryError(
                f"the call at tick {call.tick} ({call.tool}) replayed differently: "
                f"(tick, ok, error, phase, clock) {got} instead of {want}"
            )
        steps.append(step)

    try:
        replay(
            episode,
            [
                RecordedCall(agent_id=c.agent_id, tool=c.tool, args=c.args, round=c.round)
                for c in calls
            ],
            check=check,
        )
    except RecoveryError:
        raise
    except Exception as exc:  # the world refused a call it once applied
        raise RecoveryError(f"a stored call was refused on replay: {exc}") from exc
    return steps
