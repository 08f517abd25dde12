"""A run stopped half-way without the command line: the ledger closes what it opened."""

from __future__ import annotations

import asyncio
import threading

import pytest

from metasre.agents.ledger import SessionLedger, ledger_client
from metasre.agents.policies import RandomPolicy
from metasre.agents.rollout import EpisodeSpec, Played, RolloutReport, run_rollout, solo_player

SCENARIO = "meta-sre/payment-bad-deploy-v2"


async def test_a_stopped_rollout_closes_its_sessions_and_reports_only_what_finished(server):
    ledger = SessionLedger()
    under_way, stopped = threading.Event(), threading.Event()

    def player(client, spec: EpisodeSpec) -> Played:
        if spec.index == 0:
            tools = client.list_tools()
            return solo_player(lambda seed: RandomPolicy(seed, tools))(client, spec)
        handle = client.create_session(spec.scenario_id, seed=spec.seed, seats=["me"])
        under_way.set()
        assert stopped.wait(60)
        ledger.wait_closed()
        assert handle.id in ledger.closed
        raise RuntimeError("the session was closed under me")

    def run() -> tuple[RolloutReport, list[dict]]:
        with ledger_client(ledger)(server.address) as client:
            report = run_rollout(
                client,
                player,
                [EpisodeSpec(i, SCENARIO, i) for i in range(4)],
                parallel=1,
                stop=lambda: under_way.is_set(),
            )
            return report, client.list_sessions()

    async def interrupt() -> None:
        await asyncio.to_thread(under_way.wait)
        ledger.close_all_soon()  # what the command line's Ctrl-C handler calls
        stopped.set()

    stopper = asyncio.ensure_future(interrupt())
    report, still_open = await asyncio.to_thread(run)
    await stopper
    assert still_open == []
    kept, cut = ledger.cut_short(report)
    assert [r.index for r in cut] == [1] and len(ledger.closed) == 1
    assert [r.index for r in kept.results] == [0] and kept.results[0].graded
    assert [s.episodes for s in kept.summaries] == [1, 1]  # the family and TOTAL, redone


async def test_a_session_created_after_the_stop_is_closed_at_once(server):
    ledger = SessionLedger()
    ledger.close_all_soon()

    def run() -> list[dict]:
        with ledger_client(ledger)(server.address) as client:
            with pytest.raises(InterruptedError):
                client.create_session(SCENARIO, seed=0, seats=["me"])
            return client.list_sessions()

    assert await asyncio.to_thread(run) == []
    assert len(ledger.closed) == 1


def test_nothing_is_cut_short_before_a_stop():
    report = RolloutReport("random", 1, 0.0, [], [])
    assert SessionLedger().cut_short(report) == (report, [])
