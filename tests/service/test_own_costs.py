"""A seat's costs are its own: a saboteur's unneeded operations never lower a worker's reward.

Through a real server, under INDIVIDUAL and DIFFERENCE: a worker resolves the incident (its
reference remedy and report); a saboteur seat adds operations the incident did not need
(restarts, scale-ups, rollbacks of other services) and hints, anywhere before the report.
Before, each such operation cost the worker 0.35 / N under INDIVIDUAL (the grade's cost split
between the seats) and, under DIFFERENCE, whatever the clamp of the grade without the worker
at 0 could not absorb; now the worker's reward is the same as with an idle teammate, and the
saboteur pays for all of it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metasre.agents import RetryPolicy
from metasre.agents.sync import SyncClient
from metasre.cli.serving import in_process
from metasre.simulator import resolve

PAY = "meta-sre/payment-bad-deploy-v2"
SEEDS = (0, 1, 2)
MODES = ("INDIVIDUAL", "DIFFERENCE")


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with in_process(None) as served:
        yield served


def worker_calls(seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    steps = [(s.tool, dict(s.args)) for s in resolve(PAY).spec(seed).solution]
    return [("worker", "get_alerts", {})] + [("worker", tool, args) for tool, args in steps]


def rewards(address: str, seed: int, mode: str, calls: list[tuple[str, str, Any]]) -> dict:
    with (
        SyncClient(address, retry=RetryPolicy.never()) as client,
        client.session(PAY, seed=seed, seats=["worker", "saboteur"], attribution=mode) as s,
    ):
        agents = {a: client.agent(s.id, t) for a, t in s.tokens.items()}
        try:
            for seat, tool, args in calls:
                agents[seat].call(tool, args)
        finally:
            for agent in agents.values():
                agent.close()
        graded = client.get_grade(s.id)
    return {a: float(r) for a, r in graded["agent_rewards"].items()}


@functools.cache
def alone(address: str, seed: int, mode: str) -> dict:
    """The rewards with an idle teammate: what the worker earns on its own work."""
    return rewards(address, seed, mode, worker_calls(seed))


def sabotage(seed: int, draws: list[tuple[int, int, int]]) -> list[tuple[str, str, Any]]:
    """The worker's calls with the saboteur's unneeded operations put in among them."""
    spec = resolve(PAY).spec(seed)
    others = [s.name for s in spec.services if s.name != spec.ground_truth.service]
    every = [s.name for s in spec.services]
    calls = worker_calls(seed)
    for where, kind, which in draws:
        op: tuple[str, dict[str, Any]] = [
            ("restart_service", {"service": every[which % len(every)]}),
            ("scale_service", {"service": every[which % len(every)], "replicas": 6}),
            ("rollback_deployment", {"service": others[which % len(others)]}),
            ("ask_hint", {}),
        ][kind]
        calls.insert(where % len(calls), ("saboteur", *op))  # never after the report
    return calls


draws = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=99),
        st.integers(min_value=0, max_value=3),
        st.integers(min_value=0, max_value=99),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("mode", MODES)
def test_a_saboteurs_unneeded_operations_never_lower_the_workers_reward(
    address: str, mode: str
) -> None:
    @settings(
        max_examples=5,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(seed=st.sampled_from(SEEDS), draws=draws)
    def property(seed: int, draws: list[tuple[int, int, int]]) -> None:
        base = alone(address, seed, mode)
        got = rewards(address, seed, mode, sabotage(seed, draws))
        assert got["worker"] >= base["worker"] - 1e-6, (draws, base, got)
        # the saboteur pays for its own: never above what an idle seat earns
        assert got["saboteur"] <= base["saboteur"] + 1e-6, (draws, base, got)

    property()


def test_an_idle_teammate_earns_nothing_and_the_worker_its_work(address: str) -> None:
    for mode in MODES:
        base = alone(address, 0, mode)
        assert base["worker"] > 0.9 / (2 if mode == "INDIVIDUAL" else 1), (mode, base)
        if mode == "DIFFERENCE":
            assert base["saboteur"] == 0.0
