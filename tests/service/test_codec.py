"""The persistence codec: every log event survives the store's round trip unchanged.

One table (`records.KINDS`) says how each event type is stored; these properties hold for any
event Hypothesis builds, with observations and grades taken from real episodes, through JSON as
the store keeps it.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from metasre.service.core.events import (
    Applied,
    Ended,
    Event,
    LogEntry,
    Message,
    Reward,
    Started,
    Turn,
)
from metasre.service.store import codec as records
from metasre.service.store.sqlite import EventRow
from metasre.simulator import Episode, EpisodePhase, Grade, Observation, resolve

SCENARIOS = ("meta-sre/payment-bad-deploy-v2", "meta-sre/migration-cascade-v3")

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
ticks = st.integers(0, 500)


@cache
def played(scenario: str, seed: int) -> tuple[tuple[Observation, ...], tuple[Grade, ...]]:
    """Observations and grades of a real episode: the opening, then after each solution step."""
    episode = Episode.make(scenario, seed)
    observations, grades = [episode.observation()], []
    for step in resolve(scenario).instance(seed).spec.solution:
        episode.apply("a", step.tool, dict(step.args))
        observations.append(episode.observation())
        grades.append(episode.grade())
    return tuple(observations), tuple(grades)


@st.composite
def real(draw: st.DrawFn) -> tuple[Observation, Grade]:
    observations, grades = played(draw(st.sampled_from(SCENARIOS)), draw(st.integers(0, 2)))
    return draw(st.sampled_from(observations)), draw(st.sampled_from(grades))


rewards = st.builds(
    Reward,
    agent_id=names,
    tick=ticks,
    components=st.dictionaries(names, finite, max_size=4),
    total=finite,
    source_agent_id=names,
)
plain = st.dictionaries(
    names,
    st.recursive(
        st.none() | st.booleans() | finite | st.integers(-(2**53), 2**53) | names,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
        max_leaves=8,
    ),
    max_size=4,
)
phases = st.sampled_from(list(EpisodePhase))


@st.composite
def events(draw: st.DrawFn) -> Event:
    observation, grade = draw(real())
    kind = draw(st.sampled_from(["applied", "reward", "message", "turn", "started", "ended"]))
    if kind == "applied":
        return Applied(
            tick=draw(ticks),
            agent_id=draw(names),
            call_id=draw(names),
            tool=draw(names),
            args=draw(plain),
            ok=draw(st.booleans()),
            error_code=draw(names),
            text=draw(names),
            data=draw(plain),
            minutes=draw(finite),
            clock=draw(finite),
            round=draw(st.integers(0, 99)),
            phase=draw(phases),
            observation=observation,
            reward=draw(st.none() | rewards),
        )
    if kind == "reward":
        return draw(rewards)
    if kind == "message":
        return Message(
            tick=draw(ticks),
            sender=draw(names),
            to=tuple(draw(st.lists(names, max_size=3))),
            text=draw(names),
        )
    if kind == "turn":
        return Turn(
            tick=draw(ticks),
            agent_id=draw(names),
            round=draw(st.integers(0, 99)),
            timeout_seconds=draw(finite),
        )
    if kind == "started":
        return Started(episode=draw(st.integers(1, 99)), seed=draw(ticks), observation=observation)
    return Ended(
        tick=draw(ticks),
        phase=draw(phases),
        grade=grade,
        agent_rewards=draw(st.dictionaries(names, finite, max_size=3)),
    )


def through_the_store(entry: LogEntry) -> LogEntry:
    row = records.event_row("s", entry)
    # The store keeps the payload as JSON text.
    payload: dict[str, Any] = json.loads(json.dumps(row.payload))
    return records.entry_of(
        EventRow(
            row.session_id, row.sequence, row.episode, row.tick, row.kind, row.agent_id, payload
        )
    )


@settings(max_examples=300, deadline=None)
@given(event=events(), sequence=st.integers(1, 10**6), episode=st.integers(1, 99))
def test_every_event_survives_the_store(event: Event, sequence: int, episode: int) -> None:
    entry = LogEntry(sequence=sequence, episode=episode, tick=3, event=event)
    assert through_the_store(entry) == entry


def test_the_table_knows_every_event_type_once() -> None:
    assert sorted(k.cls.__name__ for k in records.KINDS) == sorted(
        t.__name__ for t in get_args(Event)
    )
    assert len({k.name for k in records.KINDS}) == len(records.KINDS)


def test_stored_payloads_keep_their_format() -> None:
    """Stores written before the table read back the same (field names are the keys)."""
    message = Message(tick=4, sender="a", to=("b", "c"), text="hi")
    kind, agent, payload = records.event_record(
        LogEntry(sequence=1, episode=1, tick=4, event=message)
    )
    assert (kind, agent, payload) == (
        "message",
        "a",
        {"tick": 4, "sender": "a", "to": ["b", "c"], "text": "hi"},
    )
