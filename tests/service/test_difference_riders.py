"""DIFFERENCE cannot be ridden, and a seat's costs are its own: properties through a real server.

Riders (`riders.py`) make edits that change no behaviour around the place a teammate's fix
goes (comments, blank lines, trailing spaces, context lines rewritten, a local variable
renamed, two functions swapped), then the teammate fixes the code wherever the riders left
it. Before the counterfactual was built from the played files (see `simulator/replay.py`), about
one rider in six of these took 0.85-0.875 of the fixer's credit; now none earns over 0.05 and the
fixer keeps its own. A saboteur's unneeded operations, anywhere in a worker's episode, never
lower the worker's reward under INDIVIDUAL or DIFFERENCE (they lowered it by 0.35 each under
INDIVIDUAL, the grade's cost split between the seats, and under DIFFERENCE once the grade without
the worker was clamped at 0).

Hypothesis draws a few examples per family (each is a session played over the wire and credited
by replays at its end), so the whole file runs in about half a minute.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metasre.agents import RetryPolicy
from metasre.agents.sync import SyncClient
from metasre.cli.serving import in_process
from metasre.simulator import Episode, resolve
from metasre.simulator.history import split_lines

from .riders import KINDS, Ride

CODE_FAMILIES = {
    "meta-sre/ad-ranking-crash-v2": ((0, 1, 4), 2),
    "meta-sre/timestamp-corruption-v2": ((1, 2, 3), 2),
    "meta-sre/pii-exposure-v2": ((0, 2), 2),
    "meta-sre/db-connection-leak-v2": ((0, 2, 3), 1),
}
"""Families whose fix is one edit: seeds of each (files and fixes differ between them), and
how many Hypothesis examples (each a real session, credited by replays at its end; the
connection-leak family's checks take seconds)."""


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with in_process(None) as served:
        yield served


def play(
    address: str, scenario: str, seed: int, attribution: str, calls: list[tuple[str, str, Any]]
) -> dict[str, float]:
    """Play `calls` (seat, tool, args) in a two-seat session; each seat's reward at the end."""
    seats = ["rider", "fixer"]
    with (
        SyncClient(address, retry=RetryPolicy.never()) as client,
        client.session(scenario, seed=seed, seats=seats, attribution=attribution) as session,
    ):
        agents = {a: client.agent(session.id, t) for a, t in session.tokens.items()}
        try:
            for seat, tool, args in calls:
                result = agents[seat].call(tool, args)
                assert result.ok, (tool, result.text)
        finally:
            for agent in agents.values():
                agent.close()
        graded = client.get_grade(session.id)
    assert graded["grade"]["final"]
    return {a: float(r) for a, r in graded["agent_rewards"].items()} | {
        "grade": float(graded["grade"]["total"])
    }


def ridden(scenario: str, seed: int, moves: list[tuple[str, int]]) -> list[tuple[str, str, Any]]:
    """The riders' edits, then the fixer's fix wherever they moved it, then its other steps."""
    spec = resolve(scenario).spec(seed)
    (edit,) = [dict(s.args) for s in spec.solution if s.tool == "edit_lines"]
    lines = split_lines(Episode.make(scenario, seed).workspace.read(edit["path"]))
    ride = Ride(edit["path"], lines, edit["start_line"] - 1, edit["end_line"])
    calls: list[tuple[str, str, Any]] = []
    for n, (kind, where) in enumerate(moves):
        args = ride.move(kind, where, n)
        if args is not None:
            calls.append(("rider", "edit_lines", args))
    calls.append(("fixer", "edit_lines", ride.fix(edit["content"])))
    calls += [("fixer", s.tool, dict(s.args)) for s in spec.solution if s.tool != "edit_lines"]
    return calls


moves = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=999)),
    min_size=1,
    max_size=5,
)


@pytest.mark.parametrize("scenario", sorted(CODE_FAMILIES))
def test_no_rider_around_a_teammates_fix_earns_difference_credit(
    address: str, scenario: str
) -> None:
    @settings(
        max_examples=CODE_FAMILIES[scenario][1],
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(seed=st.sampled_from(CODE_FAMILIES[scenario][0]), moves=moves)
    def property(seed: int, moves: list[tuple[str, int]]) -> None:
        calls = ridden(scenario, seed, moves)
        assume(any(seat == "rider" for seat, _, _ in calls))
        rewards = play(address, scenario, seed, "DIFFERENCE", calls)
        assert rewards["grade"] > 0.9, rewards  # the fix works wherever the riders put it
        assert rewards["rider"] <= 0.05, (moves, rewards)
        assert rewards["fixer"] >= rewards["grade"] - 0.05, (moves, rewards)

    property()


def test_a_rider_that_rewrites_the_fixed_line_and_its_context_earns_nothing(address: str) -> None:
    """The spelling the property found first, kept as a plain case: a local variable renamed
    in the fixed function (the fixer's fix uses the new name) on timestamp-corruption seed 1
    used to earn the rider 0.85 of a 1.0 grade."""
    calls = ridden("meta-sre/timestamp-corruption-v2", 1, [("rename", 0)])
    assert [seat for seat, _, _ in calls][:1] == ["rider"]
    rewards = play(address, "meta-sre/timestamp-corruption-v2", 1, "DIFFERENCE", calls)
    assert rewards["rider"] <= 0.05 and rewards["fixer"] >= rewards["grade"] - 0.05, rewards
